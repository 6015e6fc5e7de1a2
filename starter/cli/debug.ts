// The CLI's debug mode (-v, --log-level debug): what it resolved and every call it makes to Temporal
// and Kubernetes, as the `cli` component's lines on stderr (stdout is the command's output). Hooked
// where the clients are made (session.ts), not at each call site. Never logs a secret: an API key
// or a certificate is logged as whether it is set.
import type { KubeConfig } from '@kubernetes/client-node';
import type { makeGrpcRetryInterceptor, WorkflowClientInterceptor } from '@temporalio/client';
import type { Logger } from '../../shared/log.js';
import type { TemporalSettings } from '../../shared/temporal.js';

type GrpcInterceptor = ReturnType<typeof makeGrpcRetryInterceptor>;

/** The Temporal settings worth a line: where, which namespace and queue, and which credentials are set (not their values). */
export function temporalFields(s: TemporalSettings): Record<string, unknown> {
  const tls = s.connection.tls;
  return {
    temporalAddress: s.address,
    temporalNamespace: s.namespace,
    taskQueue: s.taskQueue,
    tls: Boolean(tls),
    clientCert: Boolean(tls && typeof tls === 'object' && tls.clientCertPair),
    apiKey: Boolean(s.connection.apiKey),
  };
}

/** The kubeconfig's choice: context, server, user's name (never the user's credentials). */
export function kubeFields(kc: KubeConfig, kubeconfig: string): Record<string, unknown> {
  return { kubeconfig, kubeContext: kc.getCurrentContext(), kubeServer: kc.getCurrentCluster()?.server, kubeUser: kc.getCurrentUser()?.name };
}

/** Every gRPC call to Temporal by its method (also the ones no workflow handle makes: list, system info, task queues). */
export function grpcDebug(log: Logger): GrpcInterceptor {
  return (options, nextCall) => {
    log.debug({ method: options.method_definition.path.split('/').pop() }, 'temporal rpc');
    return nextCall(options) as ReturnType<GrpcInterceptor>; // passed on unchanged
  };
}

/** Every workflow call with its workflow ID and the query, signal or update's name; a failure with its stack. */
export function workflowDebug(log: Logger): WorkflowClientInterceptor {
  const call = <T>(op: string, fields: Record<string, unknown>, next: () => Promise<T>): Promise<T> => {
    log.debug({ op, ...fields }, `temporal ${op}`);
    return next().catch((err: unknown) => {
      log.debug({ op, ...fields, err }, `temporal ${op} failed`);
      throw err;
    });
  };
  return {
    start: (i, next) => call('start', { workflowId: i.options.workflowId, workflowType: i.workflowType }, () => next(i)),
    startWithDetails: (i, next) => call('start', { workflowId: i.options.workflowId, workflowType: i.workflowType }, () => next(i)),
    signalWithStart: (i, next) => call('signalWithStart', { workflowId: i.options.workflowId, workflowType: i.workflowType, signal: i.signalName }, () => next(i)),
    startUpdate: (i, next) => call('update', { workflowId: i.workflowExecution.workflowId, update: i.updateName }, () => next(i)),
    signal: (i, next) => call('signal', { workflowId: i.workflowExecution.workflowId, signal: i.signalName }, () => next(i)),
    query: (i, next) => call('query', { workflowId: i.workflowExecution.workflowId, query: i.queryType }, () => next(i)),
    describe: (i, next) => call('describe', { workflowId: i.workflowExecution.workflowId }, () => next(i)),
    terminate: (i, next) => call('terminate', { workflowId: i.workflowExecution.workflowId }, () => next(i)),
    cancel: (i, next) => call('cancel', { workflowId: i.workflowExecution.workflowId }, () => next(i)),
  };
}

/**
 * Every request of this kubeconfig, by method and URL (client-node 1.x authenticates each request
 * through the config: the one place all API calls pass).
 */
export function kubeDebug(kc: KubeConfig, log: Logger): void {
  const apply = kc.applySecurityAuthentication.bind(kc);
  kc.applySecurityAuthentication = async (ctx) => {
    log.debug({ method: ctx.getHttpMethod(), url: ctx.getUrl() }, 'kubernetes call');
    return apply(ctx);
  };
}
