import { describe, expect, it } from '@jest/globals';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { ActivityExecuteInput } from '@temporalio/worker';
import { heartbeatEveryActivity } from '../../src/cli/activity-heartbeat.js';

/**
 * Every activity heartbeats while it runs, so the heartbeat timeouts the workflows set hand a dead
 * worker's activity to another worker within seconds; one that stopped beating would time out.
 */
describe('the worker’s heartbeat interceptor', () => {
  it('heartbeats every two seconds while an activity runs, and stops when it ends', async () => {
    const env = new MockActivityEnvironment();
    const beats: number[] = [];
    env.on('heartbeat', () => beats.push(Date.now()));
    const interceptor = heartbeatEveryActivity(env.context).inbound!;
    const result = await env.run(() =>
      interceptor.execute!({ args: [] } as unknown as ActivityExecuteInput, async () => {
        await new Promise((resolve) => setTimeout(resolve, 4500));
        return 'done';
      }),
    );
    expect(result).toBe('done');
    expect(beats).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(beats).toHaveLength(2);
  });

  it('passes an activity’s failure through and stops beating', async () => {
    const env = new MockActivityEnvironment();
    let beats = 0;
    env.on('heartbeat', () => beats++);
    const interceptor = heartbeatEveryActivity(env.context).inbound!;
    const failing = env.run(() =>
      interceptor.execute!({ args: [] } as unknown as ActivityExecuteInput, async () => {
        throw new Error('provider said no');
      }),
    );
    await expect(failing).rejects.toThrow('provider said no');
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(beats).toBe(0);
  });
});
