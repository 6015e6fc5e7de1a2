// The workflow half of the payload-size recorder (bench/payload-sizes.ts): interceptors bundled
// with the workflows (workflowInterceptorModules) that measure what a workflow sends and receives
// with the SDK's own payload converter and report each size through a sink. Workflow code only:
// no I/O, nothing that changes what the workflow does.
import { payloadBytes } from './payload-bytes.js';
import { proxySinks, workflowInfo, type Sinks, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

/** The kinds measured in the sandbox (activity input and result are measured where the activity runs). */
export type WorkflowPayloadKind = 'carry' | 'workflow input' | 'child input' | 'signal input' | 'update input' | 'query result' | 'workflow result';

export interface PayloadSizeSinks extends Sinks {
  payloadSizes: { record(kind: WorkflowPayloadKind, name: string, bytes: number): void };
}

const { payloadSizes } = proxySinks<PayloadSizeSinks>();

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      async execute(input, next) {
        const continued = workflowInfo().continuedFromExecutionRunId !== undefined;
        // A carry is measured where it is sent (continueAsNew below), even if the server refuses it.
        if (!continued) payloadSizes.record('workflow input', workflowInfo().workflowType, payloadBytes(input.args));
        const result = await next(input);
        payloadSizes.record('workflow result', workflowInfo().workflowType, payloadBytes([result]));
        return result;
      },
      async handleSignal(input, next) {
        payloadSizes.record('signal input', input.signalName, payloadBytes(input.args));
        return next(input);
      },
      async handleUpdate(input, next) {
        payloadSizes.record('update input', input.name, payloadBytes(input.args));
        return next(input);
      },
      async handleQuery(input, next) {
        const result = await next(input);
        payloadSizes.record('query result', input.queryName, payloadBytes([result]));
        return result;
      },
    },
  ],
  outbound: [
    {
      async continueAsNew(input, next) {
        payloadSizes.record('carry', workflowInfo().workflowType, payloadBytes(input.args));
        return next(input);
      },
      async startChildWorkflowExecution(input, next) {
        payloadSizes.record('child input', input.workflowType, payloadBytes(input.options.args ?? []));
        return next(input);
      },
    },
  ],
});
