import { describe, expect, it } from 'vitest';
import { parseJson } from '../../../shared/bronze/json-parse.ts';
import { classifyNumber, DoubleLiteral, Unstorable } from '../../../shared/bronze/values.ts';

describe('parseJson', () => {
  it('reads every number exactly, whichever parser the text takes', () => {
    expect(parseJson('{"a":1,"b":2.5,"c":"x"}')).toEqual({ a: 1, b: 2.5, c: 'x' });
    expect(parseJson('{"a":9007199254740993}')).toEqual({ a: 9007199254740993n });
    expect(parseJson('{"a":1.0}')).toEqual({ a: new DoubleLiteral(1, '1.0') });
    expect(parseJson('[1e400, 0.1000000000000000055511151231257827]')).toEqual([
      Unstorable.number('1e400', 'more digits (or range) than a double holds'),
      Unstorable.number('0.1000000000000000055511151231257827', 'more digits (or range) than a double holds'),
    ]);
    // Text that only looks like it needs the lossless parser reads the same as with JSON.parse.
    expect(parseJson('{"v":"1.0 and 1e5","n":12,"__proto__":3,"a":1,"a":2}')).toEqual(
      JSON.parse('{"v":"1.0 and 1e5","n":12,"__proto__":3,"a":1,"a":2}'),
    );
  });

  it('classifies number literals: long within int64, double when it prints back the same, else unstorable', () => {
    expect(classifyNumber('-9223372036854775808')).toEqual({ kind: 'long', value: -(2n ** 63n) });
    expect(classifyNumber('12')).toEqual({ kind: 'long', value: 12 });
    expect(classifyNumber('0.1')).toEqual({ kind: 'double', value: 0.1, whole: false });
    expect(classifyNumber('1.5e300')).toEqual({ kind: 'double', value: 1.5e300, whole: true });
    expect(classifyNumber('-0.0')).toEqual({ kind: 'double', value: -0, whole: true });
    expect(classifyNumber('1e-400')?.kind).toBe('unstorable');
    expect(classifyNumber('9223372036854775808')?.kind).toBe('unstorable');
    for (const notNumber of ['007', '+1', '.5', '5.', '1e', 'NaN', ''])
      expect(classifyNumber(notNumber)).toBeUndefined();
  });
});
