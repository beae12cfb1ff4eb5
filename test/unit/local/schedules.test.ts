import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { InletStack } from '../../../infra/inlet-stack.ts';
import { schedulesOf } from '../../../local/local-stack.ts';
import type { CfnTemplate } from '../../../local/synth.ts';
import { cdkApp } from '../../infra/cdk-app.ts';

describe("local mode's schedules, read from the template", () => {
  it("fires each bronze table's maintenance at its rate with the table as its event, and the sweeper with EventBridge's", () => {
    const template = Template.fromStack(
      new InletStack(cdkApp(), 'Schedules', {
        tables: [
          { name: 'orders', prefix: 'orders/', bronze: { format: 'jsonl' } },
          { name: 'clicks', prefix: 'clicks/', bronze: { format: 'jsonl', maintenance: { everyHours: 6 } } },
          { name: 'raw', prefix: 'raw/', bronze: { format: 'jsonl', maintenance: false } },
        ],
      }),
    ).toJSON() as CfnTemplate;
    const schedules = schedulesOf(template);
    const maintenance = schedules.filter((s) => /Maintenance/.test(s.functionLogicalId));
    expect(
      maintenance.map(({ input, everyMs, retryAttempts }) => ({ input, everyMs, retryAttempts })),
    ).toEqual([
      { input: { table: 'orders' }, everyMs: 24 * 3_600_000, retryAttempts: 2 },
      { input: { table: 'clicks' }, everyMs: 6 * 3_600_000, retryAttempts: 2 },
    ]);
    const sweeper = schedules.filter((s) => /Sweeper/.test(s.functionLogicalId));
    expect(sweeper).toHaveLength(1);
    expect(sweeper[0]?.input).toBeUndefined();
  });
});
