import { captureServiceLogs, testLogger } from '@apphost/testing';
import { LogBudget } from './log-budget';

describe('LogBudget', () => {
  let logs: ReturnType<typeof captureServiceLogs>;
  let now = Date.UTC(2030, 0, 1);
  let budget: LogBudget;
  let written: string[];

  beforeEach(() => {
    logs = captureServiceLogs('debug');
    budget = new LogBudget('app log', 2, testLogger('log-budget'), () => now);
    written = [];
  });
  afterEach(() => logs.stop());

  const line = (viewId: string, text: string) => budget.log(viewId, () => written.push(`${viewId}:${text}`));

  it('writes a View’s first lines of the minute, drops the rest with one warning, and reports the count when the minute is over', () => {
    for (const text of ['a', 'b', 'c', 'd', 'e']) line('v1', text);
    line('v2', 'other');
    expect(written).toEqual(['v1:a', 'v1:b', 'v2:other']);
    expect(logs.lines.map((l) => [l['msg'], l['viewId']])).toEqual([
      ['app log of a View over its budget: dropping its lines for the rest of the minute', 'v1'],
    ]);

    now += 59_999;
    line('v1', 'f');
    expect(written).toHaveLength(3);
    now += 1;
    line('v1', 'g');
    expect(written.at(-1)).toBe('v1:g');
    expect(logs.lines.at(-1)).toMatchObject({ msg: 'app log lines of a View dropped', viewId: 'v1', dropped: 4, limit: 2 });
  });

  it('tracks a bounded number of Views, forgetting the longest-unseen first', () => {
    line('first', 'a');
    line('first', 'b');
    line('first', 'dropped');
    for (let i = 0; i < 10_000; i++) line(`v${i}`, 'x');
    expect(logs.lines.at(-1)).toMatchObject({ msg: 'app log lines of a View dropped', viewId: 'first', dropped: 1 });
    line('first', 'again'); // forgotten, so it starts afresh
    expect(written.at(-1)).toBe('first:again');
    line('v9999', 'y'); // still tracked: its second line of the minute
    line('v9999', 'z');
    expect(written.at(-1)).toBe('v9999:y');
  });
});
