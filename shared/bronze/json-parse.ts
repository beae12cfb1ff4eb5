import { parse } from 'lossless-json';
import { jsonNumber } from './values.ts';

/**
 * Text that native `JSON.parse` might read differently from what it spells: an exponent (`1e400` is
 * Infinity), a decimal whose fraction is only zeros (`1.0` would read as the integer 1, while it is a
 * double by its spelling), or 16 significant digits or more (a double holds 15 exactly; `9007199254740993`
 * reads as ...992). Any other number literal (at most 15 digits, no exponent) reads exactly and prints
 * back the same, so such text takes the native parser; a match anywhere, even inside a string, only costs
 * the lossless parser.
 */
const NEEDS_LOSSLESS = /\d[eE]|\.0+(?!\d)|\d(?:\.?\d){15}/;

/**
 * JSON text to values without altering a number: native `JSON.parse` when every number in the text reads
 * exactly, lossless-json otherwise, with numbers as `jsonNumber` classifies them (a long within int64, a
 * double that prints back the same, or an Unstorable kept as its literal). Duplicate keys keep the last
 * value, as `JSON.parse` does, so both paths read any text alike.
 */
export function parseJson(text: string): unknown {
  if (!NEEDS_LOSSLESS.test(text)) return JSON.parse(text);
  return parse(text, undefined, {
    parseNumber: jsonNumber,
    onDuplicateKey: ({ newValue }) => newValue,
  });
}
