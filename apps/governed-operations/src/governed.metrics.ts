import { Counter, type Registry } from 'prom-client';

/** governed-operations' own metrics on the service's registry. */
export class GovernedMetrics {
  readonly sealedCommits: Counter<'outcome'>;

  constructor(registry: Registry) {
    this.sealedCommits = new Counter({
      name: 'apphost_governed_sealed_commits_total',
      help: 'Sealed references committed to their appended event after the reply, by outcome (committed, failed: the recovery pass commits it)',
      labelNames: ['outcome'],
      registers: [registry],
    });
  }
}
