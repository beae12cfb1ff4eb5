import {
  arrayOf,
  type BronzeType,
  decimalType,
  fieldNamesProblem,
  MAX_DECIMAL_PRECISION,
  mapOf,
  type PrimitiveType,
  structOf,
} from './delta-types.ts';
import { HintTypeError } from './errors.ts';

export { HintTypeError } from './errors.ts';

/**
 * Spark DDL type names, as Auto Loader's `cloudFiles.schemaHints` takes them (`bigint`, `int`,
 * `decimal(10,2)`, `struct<a:int,b:string>`, `array<date>`, `map<string,long>`), with the Delta names
 * (`long`, `integer`, ...) beside them. Case-insensitive, as Spark's parser is.
 */
const PRIMITIVES: Readonly<Record<string, PrimitiveType>> = {
  string: 'string',
  long: 'long',
  bigint: 'long',
  int: 'integer',
  integer: 'integer',
  short: 'short',
  smallint: 'short',
  byte: 'byte',
  tinyint: 'byte',
  float: 'float',
  real: 'float',
  double: 'double',
  boolean: 'boolean',
  binary: 'binary',
  date: 'date',
  timestamp: 'timestamp',
  timestamp_ltz: 'timestamp',
  timestamp_ntz: 'timestamp_ntz',
};
const DECIMALS = new Set(['decimal', 'dec', 'numeric']);
/** Spark's `decimal` without arguments (DecimalType.USER_DEFAULT). */
const DEFAULT_DECIMAL = { precision: 10, scale: 0 };

/**
 * The Delta type a `schemaHints` entry names, or HintTypeError saying why there is none. Struct fields are
 * `name:type` or `name type`, a name in backticks when it has other characters (`` `a b` ``, a backtick
 * doubled); field names follow the column-name rules (no ` ,;{}()\n\t=`, unique regardless of case). A
 * map key is a primitive type (a JSON object's keys are text).
 */
export function parseHintType(text: string): BronzeType {
  const parser = new Parser(text);
  const type = parser.type();
  parser.end();
  const problem = fieldNamesProblem(type);
  if (problem) throw new HintTypeError(text, `Delta cannot store it: ${problem}`);
  return type;
}

class Parser {
  private at = 0;
  constructor(private readonly text: string) {}

  private fail(why: string): never {
    throw new HintTypeError(this.text, `${why} (at character ${this.at + 1})`);
  }

  private space() {
    while (this.at < this.text.length && /\s/.test(this.text[this.at] as string)) this.at += 1;
  }

  private peek(): string | undefined {
    this.space();
    return this.text[this.at];
  }

  private take(char: string): boolean {
    if (this.peek() !== char) return false;
    this.at += 1;
    return true;
  }

  private expect(char: string) {
    if (!this.take(char)) this.fail(`expected '${char}'`);
  }

  private word(): string {
    this.space();
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.text.slice(this.at));
    if (!m) return this.fail('expected a type');
    this.at += m[0].length;
    return m[0];
  }

  private integer(): number {
    this.space();
    const m = /^\d+/.exec(this.text.slice(this.at));
    if (!m) return this.fail('expected a number');
    this.at += m[0].length;
    return Number(m[0]);
  }

  end() {
    if (this.peek() !== undefined) this.fail('unexpected text after the type');
  }

  type(): BronzeType {
    const name = this.word().toLowerCase();
    const primitive = PRIMITIVES[name];
    if (primitive) return primitive;
    if (DECIMALS.has(name)) return this.decimal();
    if (name === 'array') {
      this.expect('<');
      const element = this.type();
      this.expect('>');
      return arrayOf(element);
    }
    if (name === 'map') {
      this.expect('<');
      const key = this.type();
      if (typeof key !== 'string') this.fail('a map key must be a primitive type');
      this.expect(',');
      const value = this.type();
      this.expect('>');
      return mapOf(key, value);
    }
    if (name === 'struct') return this.struct();
    return this.fail(`unknown type '${name}'`);
  }

  private decimal(): BronzeType {
    let { precision, scale } = DEFAULT_DECIMAL;
    if (this.take('(')) {
      precision = this.integer();
      scale = this.take(',') ? this.integer() : 0;
      this.expect(')');
    }
    if (precision < 1 || precision > MAX_DECIMAL_PRECISION)
      this.fail(`decimal precision 1-${MAX_DECIMAL_PRECISION} (PROTOCOL.md "Primitive Types")`);
    if (scale > precision) this.fail('a decimal scale cannot exceed its precision');
    return decimalType(precision, scale);
  }

  private struct(): BronzeType {
    this.expect('<');
    const fields: Array<{ name: string; type: BronzeType }> = [];
    if (this.peek() === '>') this.fail('a struct needs at least one field (Parquet has no empty group)');
    do {
      const name = this.fieldName();
      this.take(':');
      fields.push({ name, type: this.type() });
    } while (this.take(','));
    this.expect('>');
    return structOf(fields);
  }

  private fieldName(): string {
    if (this.peek() !== '`') return this.word();
    let name = '';
    this.at += 1;
    for (;;) {
      const close = this.text.indexOf('`', this.at);
      if (close < 0) return this.fail('unclosed backtick');
      name += this.text.slice(this.at, close);
      this.at = close + 1;
      if (this.text[this.at] !== '`') return name;
      name += '`';
      this.at += 1;
    }
  }
}

/** A table's `schemaHints` as types (the config validated every one). */
export function hintTypes(hints: Readonly<Record<string, string>>): Record<string, BronzeType> {
  return Object.fromEntries(Object.entries(hints).map(([name, text]) => [name, parseHintType(text)]));
}
