// The bronze catalog's infrastructure (docs/bronze.md "Catalog", docs/security.md): the Glue database, and
// the sink's Glue grants on exactly the catalogued tables.
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { readContext } from '../../infra/context.ts';
import { InletStack, type InletStackProps } from '../../infra/inlet-stack.ts';
import { ENV, OUTPUTS } from '../../shared/kernel/names.ts';
import { cdkApp } from './cdk-app.ts';

const synth = (props: Partial<InletStackProps> & Pick<InletStackProps, 'tables'>) =>
  Template.fromStack(new InletStack(cdkApp(), 'Lake-Stack', props));

/** The sink role's Glue statements as `actions on resources`, joins rendered with their parts. */
function glueGrants(template: Template): string[] {
  const text = (r: unknown): string =>
    typeof r === 'string'
      ? r
      : (r as Record<string, unknown>).Ref
        ? `<${(r as { Ref: string }).Ref}>`
        : ((r as { 'Fn::Join': [string, unknown[]] })['Fn::Join']?.[1] ?? []).map(text).join('');
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .flatMap(
      (p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>,
    )
    .filter((s) => [s.Action].flat().some((a) => a.startsWith('glue:')))
    .map((s) => `${[s.Action].flat().join(',')} on ${[s.Resource].flat().map(text).join(' ')}`);
}

describe('bronze catalog infrastructure', () => {
  it('creates the database, named from the stack, and lets the sink get, create and update exactly its tables', () => {
    const template = synth({
      tables: [
        { name: 'click-events', prefix: 'c/', bronze: { format: 'json' } },
        { name: 'orders', prefix: 'o/', bronze: { format: 'json' } },
        { name: 'private', prefix: 'p/', bronze: { format: 'json', catalog: false } },
        { name: 'raw', prefix: 'r/' },
      ],
    });
    template.hasResourceProperties('AWS::Glue::Database', { DatabaseInput: { Name: 'lake_stack_bronze' } });
    const arn = (resource: string) => `arn:<AWS::Partition>:glue:<AWS::Region>:<AWS::AccountId>:${resource}`;
    const [db] = Object.keys(template.findResources('AWS::Glue::Database'));
    expect(glueGrants(template)).toEqual([
      `glue:CreateTable,glue:GetTable,glue:UpdateTable on ${[
        arn('catalog'),
        arn(`database/<${db}>`),
        arn(`table/<${db}>/click_events`),
        arn(`table/<${db}>/orders`),
      ].join(' ')}`,
    ]);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { [ENV.glueDatabase]: { Ref: db } } },
    });
  });

  it('takes the database name given, and creates no database when no table is catalogued', () => {
    const named = synth({
      tables: [{ name: 'orders', prefix: 'o/', bronze: { format: 'json' } }],
      pipeline: { bronzeSink: { catalogDatabase: 'sales_bronze' } },
    });
    named.hasResourceProperties('AWS::Glue::Database', { DatabaseInput: { Name: 'sales_bronze' } });
    // Its real name is a stack output, for the CLI and local mode's local.json (never guessed from the stack).
    named.hasOutput(OUTPUTS.glueDatabase, { Value: 'sales_bronze' });
    const none = synth({
      tables: [{ name: 'orders', prefix: 'o/', bronze: { format: 'json', catalog: false } }],
    });
    none.resourceCountIs('AWS::Glue::Database', 0);
    expect(Object.keys(none.findOutputs(OUTPUTS.glueDatabase))).toEqual([]);
    expect(glueGrants(none)).toEqual([]);
    expect(() =>
      synth({
        tables: [{ name: 'orders', prefix: 'o/', bronze: { format: 'json' } }],
        pipeline: { bronzeSink: { catalogDatabase: 'Sales-Bronze' } },
      }),
    ).toThrow(/lowercase letters, digits and _/);
  });

  it('takes the database name from the cdk context (`-c inlet:catalogDatabase=...`)', () => {
    const { props } = readContext(
      (key) =>
        ({
          'inlet:tables': [{ name: 'orders', prefix: 'o/', bronze: { format: 'json' } }],
          'inlet:catalogDatabase': 'sales_bronze',
        })[key],
    );
    expect(props.pipeline?.bronzeSink?.catalogDatabase).toBe('sales_bronze');
    synth(props).hasOutput(OUTPUTS.glueDatabase, { Value: 'sales_bronze' });
  });
});
