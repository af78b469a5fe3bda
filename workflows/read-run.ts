import {
  ChildWorkflowCancellationType,
  ParentClosePolicy,
  executeChild,
  isCancellation,
  patched,
  workflowInfo,
} from '@temporalio/workflow';
import {
  CANCELLED_READ,
  readWaitOf,
  type InlineReadOutcome,
  type ReadObjectInput,
  type ReadObjectResult,
} from '../src/temporal/contracts/read.js';
import { readWorkflowId } from '../src/temporal/contracts/workflow-ids.js';
import { errorMessage } from './error-message.js';
import { inlineRead } from './installation-activities.js';
import { endRead } from './read-end.js';
import type { readObjectWorkflow } from './read.js';

/** Workflows started before scheduled reads ran inline started a child for each. */
const INLINE_READS = 'inline-scheduled-reads';

/**
 * One read, run by its installation's workflow in ReadRun's modes (src/domain/reads/read-run.ts):
 * a scheduled read inline first (`inlinePages` > 0: one local activity, begin, a few pages, finish),
 * handing the rest, with what to wait for, to its own workflow; any other read in its own workflow
 * from the start.
 */
export async function runReadModes(input: ReadObjectInput, inlinePages: number): Promise<ReadObjectResult> {
  if (input.readType !== 'scheduled' || inlinePages <= 0 || !patched(INLINE_READS)) return readAsChild(input);
  const inline = await readInline(input, inlinePages);
  if (!inline.handover) return inline;
  const wait = readWaitOf(inline);
  return readAsChild({ ...input, ...(wait && { wait }) });
}

/**
 * The inline part of a scheduled read. Any failure of the activity itself (a timeout, a worker
 * lost) hands over too: the child begins again idempotently and resumes from the checkpoint. A
 * cancelled read (the installation is deleted) ends its operation, as the read workflow does.
 */
async function readInline(input: ReadObjectInput, maxPages: number): Promise<InlineReadOutcome> {
  try {
    return await inlineRead(input.operationId)({ ...input, maxPages });
  } catch (error) {
    if (!isCancellation(error)) return { handover: true, reason: errorMessage(error) };
    await endRead(input, CANCELLED_READ, { cancelled: true });
    throw error;
  }
}

function readAsChild(input: ReadObjectInput): Promise<ReadObjectResult> {
  return executeChild<typeof readObjectWorkflow>('readObjectWorkflow', {
    workflowId: readWorkflowId(input.operationId),
    args: [input],
    // The read is found in the Temporal UI by the same attributes as its installation.
    ...(patched('read-search-attributes') && {
      typedSearchAttributes: workflowInfo().typedSearchAttributes,
    }),
    // A read never outlives its installation's workflow; continue-as-new waits for reads first.
    parentClosePolicy: ParentClosePolicy.TERMINATE,
    cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
}
