import type { OvsdbClient } from '../client.js';
import type { Replica } from '../replica.js';
import type { VswitchTables } from '../vswitch.js';
import { VSWITCH_DB } from '../vswitch.js';
import type { ChassisDesired } from './desired.js';
import { planChassis } from './plan.js';
import { stateOf } from './state.js';

export interface EnsureResult {
  /** Whether a transaction was sent (false: the chassis already was as desired). */
  transacted: boolean;
  changes: string[];
  conflicts: string[];
}

/**
 * Brings a chassis to `desired`: plans against the replica (pure), sends the plan as one
 * transaction if it is not empty, then waits until the replica shows the result, so that an
 * immediate second run plans nothing and sends nothing.
 */
export async function ensureChassis(
  client: OvsdbClient,
  replica: Replica<VswitchTables>,
  desired: ChassisDesired,
  opts: { settleTimeoutMs?: number } = {},
): Promise<EnsureResult> {
  const schema = await client.getSchema(VSWITCH_DB);
  const plan = planChassis(desired, stateOf(replica, schema));
  if (plan.txn.length === 0) return { transacted: false, changes: [], conflicts: plan.conflicts };
  plan.txn.comment(`weft: ensure chassis (${plan.changes.length} change(s))`);
  await client.run(plan.txn);
  await settle(
    replica,
    () => planChassis(desired, stateOf(replica, schema)).txn.length === 0,
    opts.settleTimeoutMs ?? 5000,
  );
  return { transacted: true, changes: plan.changes, conflicts: plan.conflicts };
}

/** Resolves when `done()` holds, re-checking after each replica batch, or after the timeout. */
function settle(replica: Replica<VswitchTables>, done: () => boolean, timeoutMs: number): Promise<void> {
  if (done()) return Promise.resolve();
  return new Promise((resolve) => {
    const finish = () => {
      clearTimeout(timer);
      replica.off('batch', check);
      resolve();
    };
    const check = () => {
      if (done()) finish();
    };
    const timer = setTimeout(finish, timeoutMs);
    replica.on('batch', check);
  });
}
