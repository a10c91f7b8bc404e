/**
 * Named crash points compiled into production code paths, armed only by tests: a test arms a point, the code
 * path calls `await faults.hit('commit.after-write')`, and the armed action runs there (throw an `InjectedFault` to
 * model a process dying at that instant, or await a latch to hold a race open). Unarmed, `hit` costs one Map lookup.
 *
 * One style everywhere: a service provides `new FaultPoints<ItsFaultPoint>()` under `FAULT_POINTS`, injects it with
 * `@Inject(FAULT_POINTS)`, and declares its points as one exported union type next to its module
 * (`<service>.faults.ts`). Names follow one scheme, `<operation>.<moment>-<step>` in kebab case, where the moment is
 * `before`, `inside` or `after` (`create.after-store-write`, `batch.before-append`); `FaultPointName` enforces it.
 */
export class InjectedFault extends Error {
  override name = 'InjectedFault';
  constructor(readonly point: string) {
    super(`injected fault at ${point}`);
  }
}

/**
 * The Nest token under which every service provides its `FaultPoints`, so a test that boots services by
 * definition (without importing the app) can arm them: `running.app.get(FAULT_POINTS)`.
 */
export const FAULT_POINTS = Symbol.for('apphost.fault-points');

/** When a point fires relative to its step. */
export type FaultMoment = 'before' | 'inside' | 'after';

/** The one naming scheme of fault points: `<operation>.<moment>-<step>`. */
export type FaultPointName = `${string}.${FaultMoment}-${string}`;

export type FaultAction = 'throw' | (() => Promise<void> | void);

export class FaultPoints<P extends FaultPointName = FaultPointName> {
  private readonly armed = new Map<P, { action: FaultAction; remaining: number }>();

  /** Arms `point` for the next `times` hits (default once). */
  arm(point: P, action: FaultAction = 'throw', times = 1): void {
    this.armed.set(point, { action, remaining: times });
  }

  disarm(point?: P): void {
    if (point === undefined) this.armed.clear();
    else this.armed.delete(point);
  }

  async hit(point: P): Promise<void> {
    const entry = this.armed.get(point);
    if (!entry) return;
    if (--entry.remaining <= 0) this.armed.delete(point);
    if (entry.action === 'throw') throw new InjectedFault(point);
    await entry.action();
  }
}
