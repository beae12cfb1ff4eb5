// The mutation check counts a grant once however many stacks of other tables hold it: a statement's table
// names are made generic. Glue table ARNs name a table by its catalog name (`click_events` for `click-events`),
// so each stack's Glue statement was a grant of its own, and one whose sink made no Glue call failed the check.
import { describe, expect, it } from 'vitest';
import { bindTemplate } from '../../../../local/iam/policies.ts';

const glueTable = (name: string) => ({
  'Fn::Join': [
    '',
    [
      'arn:aws:glue:',
      { Ref: 'AWS::Region' },
      ':',
      { Ref: 'AWS::AccountId' },
      ':table/',
      { Ref: 'CatalogDatabase' },
      `/${name}`,
    ],
  ],
});

function template(tables: readonly string[]) {
  return {
    Resources: {
      SinkRole: { Type: 'AWS::IAM::Role', Properties: {} },
      SinkRoleDefaultPolicy: {
        Type: 'AWS::IAM::Policy',
        Properties: {
          Roles: [{ Ref: 'SinkRole' }],
          PolicyDocument: {
            Statement: [
              {
                Effect: 'Allow',
                Action: 'glue:GetTable',
                Resource: tables.map((t) => glueTable(t.replaceAll('-', '_'))),
              },
            ],
          },
        },
      },
      Sink: {
        Type: 'AWS::Lambda::Function',
        Properties: {
          Role: { 'Fn::GetAtt': ['SinkRole', 'Arn'] },
          Environment: {
            Variables: {
              INLET_CONFIG: JSON.stringify({ tables: tables.map((name) => ({ name, prefix: `${name}/` })) }),
            },
          },
        },
      },
    },
  };
}

const physical = { CatalogDatabase: { ref: 'inlet_bronze' }, SinkRole: { ref: 'sink-role' } };

describe('grants made generic for the mutation check', () => {
  it("names a Glue table's ARN by <table>, so stacks of other tables hold the same grant", () => {
    const one = bindTemplate(template(['click-events']) as never, physical);
    const two = bindTemplate(template(['orders', 'audit-log']) as never, physical);
    const grants = (stack: typeof one) => Object.values(Object.values(stack.roles)[0]?.grants ?? {});
    expect(grants(one)).toEqual(grants(two));
    expect(grants(one)[0]).toMatch(/table\/CatalogDatabase\/<table>$/);
  });
});
