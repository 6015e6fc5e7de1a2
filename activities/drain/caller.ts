// Which drain runs the current activity (a cycle's, a NodeMaintenance's, the CLI's), for the chaos
// runner's kill points (shared/failpoint.ts): the drain's activities are the same for all three.
import { Context } from '@temporalio/activity';
import { drainCaller } from '../../workflows/ids.js';

export function currentDrainCaller(): ReturnType<typeof drainCaller> {
  let id: string | undefined;
  try {
    id = Context.current().info.workflowExecution?.workflowId;
  } catch {
    // called outside an activity (a test)
  }
  return drainCaller(id);
}
