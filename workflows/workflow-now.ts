/** The sandbox's Date is workflow time: deterministic, and the same on replay. */
export function workflowNow(): Date {
  return new Date();
}
