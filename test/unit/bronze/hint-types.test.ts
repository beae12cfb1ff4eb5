import { describe, expect, it } from 'vitest';
import { arrayOf, mapOf, structOf } from '../../../shared/bronze/delta-types.ts';
import { HintTypeError, parseHintType } from '../../../shared/bronze/hint-types.ts';

describe('schemaHints types in Spark DDL (Auto Loader cloudFiles.schemaHints)', () => {
  it('names every Delta primitive type, with the Spark DDL aliases, in any case', () => {
    const cases: Array<[string, string]> = [
      ['string', 'string'],
      ['STRING', 'string'],
      ['long', 'long'],
      ['bigint', 'long'],
      ['int', 'integer'],
      ['integer', 'integer'],
      ['short', 'short'],
      ['smallint', 'short'],
      ['byte', 'byte'],
      ['tinyint', 'byte'],
      ['float', 'float'],
      ['real', 'float'],
      ['double', 'double'],
      ['boolean', 'boolean'],
      ['binary', 'binary'],
      ['date', 'date'],
      ['timestamp', 'timestamp'],
      ['timestamp_ltz', 'timestamp'],
      ['timestamp_ntz', 'timestamp_ntz'],
      ['decimal(10,2)', 'decimal(10,2)'],
      ['DECIMAL( 38 , 0 )', 'decimal(38,0)'],
      ['decimal(5)', 'decimal(5,0)'],
      ['decimal', 'decimal(10,0)'],
      ['numeric(4,1)', 'decimal(4,1)'],
      ['dec(4,1)', 'decimal(4,1)'],
    ];
    for (const [text, type] of cases) expect(parseHintType(text), text).toBe(type);
  });

  it('names nested types: struct<name:type, ...> (or `name type`), array<type>, map<key,value>', () => {
    expect(parseHintType('struct<a:int, b: array<string>, `c-d`:map<string,decimal(3,1)>>')).toEqual(
      structOf([
        { name: 'a', type: 'integer' },
        { name: 'b', type: arrayOf('string') },
        { name: 'c-d', type: mapOf('string', 'decimal(3,1)') },
      ]),
    );
    expect(parseHintType('STRUCT<x BIGINT, y TIMESTAMP>')).toEqual(
      structOf([
        { name: 'x', type: 'long' },
        { name: 'y', type: 'timestamp' },
      ]),
    );
    expect(parseHintType('array<struct<`a``b`:date>>')).toEqual(
      arrayOf(structOf([{ name: 'a`b', type: 'date' }])),
    );
  });

  it('refuses what Delta cannot hold or a JSON value cannot give, saying why', () => {
    const problems: Array<[string, RegExp]> = [
      ['decimal(39,0)', /precision 1-38/],
      ['decimal(3,4)', /scale/],
      ['varchar(3)', /unknown type 'varchar'/],
      ['struct<>', /at least one field/],
      ['struct<a:int,A:int>', /differ only by case/],
      ['struct<`a,b`:int>', /cannot store/],
      ['map<struct<a:int>,int>', /map key/],
      ['array<int', /expected '>'/],
      ['int int', /after the type/],
      ['', /a type/],
      ['interval', /unknown type/],
    ];
    for (const [text, why] of problems) {
      expect(() => parseHintType(text), text).toThrow(HintTypeError);
      expect(() => parseHintType(text), text).toThrow(why);
    }
  });
});
