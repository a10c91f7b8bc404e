import { Counter, type Registry } from 'prom-client';

/** Lifecycle metrics on the service's registry: deletion progress and failures go here and to the record, never to events. */
export class LifecycleMetrics {
  readonly cascadeSteps: Counter<'participant' | 'step' | 'outcome'>;
  readonly transitions: Counter<'transition' | 'outcome'>;

  constructor(registry: Registry) {
    this.cascadeSteps = new Counter({
      name: 'apphost_lifecycle_cascade_steps_total',
      help: 'Deletion cascade steps by participant, step (revoke, purge, session) and outcome (ok, failed)',
      labelNames: ['participant', 'step', 'outcome'],
      registers: [registry],
    });
    this.transitions = new Counter({
      name: 'apphost_lifecycle_transitions_total',
      help: 'Lifecycle transitions by kind (reserve, reclaim, commit, activate, adopt, delete, recover) and outcome',
      labelNames: ['transition', 'outcome'],
      registers: [registry],
    });
  }
}
