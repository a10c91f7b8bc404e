import { FaultPlane } from './fault-plane';
import { writeFaultRows } from './fault-table';
import type { FaultOutcome } from './invariants';

/**
 * One fault-suite file: its own plane (started before its tests, stopped after) and the table rows its faults add,
 * written to `tmp/faults-table/<name>.json` when the file ends. Call at the top of a `describe`.
 */
export function faultSuite(name: string): { readonly plane: FaultPlane; readonly rows: FaultOutcome[] } {
  let plane: FaultPlane | undefined;
  const rows: FaultOutcome[] = [];
  beforeAll(async () => {
    plane = await FaultPlane.start();
  }, 150_000);
  afterAll(async () => {
    writeFaultRows(name, rows);
    await plane?.stop();
  }, 60_000);
  return {
    get plane(): FaultPlane {
      if (!plane) throw new Error('the fault plane has not started');
      return plane;
    },
    rows,
  };
}
