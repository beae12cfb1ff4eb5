import * as z from '../kernel/zod.ts';
import { type BronzeType, decimalOf, decimalType, MAX_DECIMAL_PRECISION, typeText } from './delta-types.ts';
import { type Converter, MISFIT, typedConverter } from './fit.ts';
import { untypedConverter } from './fit-untyped.ts';
import type { Column, TableSchema } from './schema.ts';
import { Unstorable } from './values.ts';

/**
 * Delta's type widening (PROTOCOL.md "Type Widening"), as the bronze sink applies it when a table's config
 * has `typeWidening: true` (docs/bronze.md, "Type widening"): a value that does not fit its column's type
 * widens the column, in the commit that writes it, to the narrowest type Delta allows that holds it exactly.
 * Existing data files keep their physical types; readers convert them ("Reader Requirements for Type
 * Widening"). Off by default: delta-rs refuses to read a table with the `typeWidening` reader feature.
 */

/** The field metadata key of a column's type changes (PROTOCOL.md "Type Change Metadata"). */
export const TYPE_CHANGES_KEY = 'delta.typeChanges';
/** The table property writers must find `true` to widen (PROTOCOL.md "Type Widening": "When supported"). */
export const ENABLE_TYPE_WIDENING = 'delta.enableTypeWidening';
/** The table feature, reader and writer (PROTOCOL.md: reader version 3, writer version 7). */
export const TYPE_WIDENING_FEATURE = 'typeWidening';

/** One entry of `delta.typeChanges`; `fieldPath` (a map key/value or array element) only another writer's. */
export const typeChangeSchema = z.object({
  fromType: z.string(),
  toType: z.string(),
  fieldPath: z.optional(z.string()),
});
export type TypeChange = z.infer<typeof typeChangeSchema>;
export const typeChangesSchema = z.array(typeChangeSchema);

const INTEGRAL: readonly BronzeType[] = ['byte', 'short', 'integer', 'long'];

/**
 * Whether the sink may widen `from` to `to`. Of the changes PROTOCOL.md "Type Widening" allows, the ones
 * Delta's own writers apply by schema evolution (delta-io/delta 4.0 `TypeWideningShims
 * .isTypeChangeSupportedForSchemaEvolution`): integral to a wider integral, float to double,
 * `decimal(p,s)` to `decimal(p+k1,s+k2)` with `k1 >= k2 >= 0`. Not byte/short/integer to double or decimal,
 * nor date to timestamp_ntz: those change what a column is (a count becomes a measure, a day a time of day)
 * and Delta applies them only when asked (`ALTER TABLE ... CHANGE COLUMN ... TYPE`).
 */
export function isAutomaticWidening(from: BronzeType, to: BronzeType): boolean {
  const i = INTEGRAL.indexOf(from);
  const j = INTEGRAL.indexOf(to);
  if (i >= 0 && j >= 0) return i < j;
  if (from === 'float') return to === 'double';
  const a = decimalOf(from);
  const b = decimalOf(to);
  if (!a || !b || (a.precision === b.precision && a.scale === b.scale)) return false;
  return b.scale >= a.scale && b.precision - b.scale >= a.precision - a.scale;
}

const widenable = (type: BronzeType) => INTEGRAL.includes(type) || type === 'float' || !!decimalOf(type);

/**
 * The widening a version needs (pass 1 of a version, beside the SchemaObserver): for each column of the
 * table, the narrowest allowed type holding every value seen so far, when its own type does not. By value,
 * not by declared type: a Parquet INT64 column whose values all fit an `integer` column widens nothing.
 * A value no allowed type holds leaves the column as it is (pass 2 rescues it).
 */
export class WideningObserver {
  private readonly columns: ReadonlyMap<string, BronzeType>;
  private readonly needed = new Map<string, BronzeType>();
  private readonly converters = new Map<string, Converter>();

  /** `columns`: the table's data columns that may widen (not its partition columns). */
  constructor(
    columns: readonly Column[],
    private readonly csv: boolean,
  ) {
    this.columns = new Map(columns.filter((c) => widenable(c.type)).map((c) => [c.name, c.type]));
  }

  /** One record's values, with its file's declared types (Parquet). */
  observe(values: Readonly<Record<string, unknown>>, types?: ReadonlyMap<string, BronzeType>): void {
    for (const [name, own] of this.columns) {
      const value = values[name];
      if (value === null || value === undefined || value instanceof Unstorable) continue;
      if (this.csv && value === '') continue;
      const from = types?.get(name);
      if (types && from === undefined) continue;
      const current = this.needed.get(name) ?? own;
      if (this.fits(value, from, current)) continue;
      const wider = this.narrowestHolding(value, from, current);
      if (wider) this.needed.set(name, wider);
    }
  }

  /** Column -> the type it widens to; only columns that need it. */
  widened(): ReadonlyMap<string, BronzeType> {
    return this.needed;
  }

  private fits(value: unknown, from: BronzeType | undefined, to: BronzeType): boolean {
    const key = `${from === undefined ? '' : typeText(from)}>${typeText(to)}`;
    let convert = this.converters.get(key);
    if (!convert) {
      convert = from === undefined ? untypedConverter(to, this.csv) : typedConverter(from, to);
      this.converters.set(key, convert);
    }
    return convert(value) !== MISFIT;
  }

  /** The narrowest type `current` may widen to that holds `value`, or undefined. */
  private narrowestHolding(value: unknown, from: BronzeType | undefined, current: BronzeType) {
    const decimal = decimalOf(current);
    if (!decimal) {
      const wider = current === 'float' ? ['double' as const] : INTEGRAL.slice(INTEGRAL.indexOf(current) + 1);
      return wider.find((to) => this.fits(value, from, to));
    }
    // The scale first (the value's own, at least the column's), then the integer digits: the narrowest
    // decimal(k + t, t) with t >= s and k >= p - s that holds it.
    const { precision, scale } = decimal;
    for (let t = scale; t <= MAX_DECIMAL_PRECISION; t++) {
      if (!this.fits(value, from, decimalType(MAX_DECIMAL_PRECISION, t))) continue;
      for (let k = precision - scale; k + t <= MAX_DECIMAL_PRECISION; k++) {
        const to = decimalType(k + t, t);
        if (this.fits(value, from, to)) return isAutomaticWidening(current, to) ? to : undefined;
      }
      return undefined;
    }
    return undefined;
  }
}

/** `schema` with the columns in `widened` at their new types, each change appended to its `typeChanges`. */
export function widenSchema(schema: TableSchema, widened: ReadonlyMap<string, BronzeType>): TableSchema {
  return schema.map((c) => {
    const to = widened.get(c.name);
    if (to === undefined || !isAutomaticWidening(c.type, to)) return c;
    const change: TypeChange = { fromType: typeText(c.type), toType: typeText(to) };
    return { ...c, type: to, typeChanges: [...(c.typeChanges ?? []), change] };
  });
}

/** Whether a column records a type change (its table then needs the feature: "Type Widening", "To support this feature"). */
export const hasTypeChanges = (schema: TableSchema) => schema.some((c) => (c.typeChanges?.length ?? 0) > 0);
