import type { SchemaElement, SchemaTree } from 'hyparquet';
import { arrayOf, type BronzeType, fieldNamesProblem, mapOf, structOf } from './delta-types.ts';
import { Bad, type FieldReader, isNull, primitiveReader, q, rawJson } from './parquet-leaves.ts';

/**
 * Parquet groups (LIST, MAP, structs) as Delta arrays, maps and structs, over the leaf readers of
 * parquet-leaves.ts, mirroring how hyparquet assembles them.
 */
/** The element node of a LIST group, the way hyparquet assembles it (three-level, or two-level legacy). */
function listElement(node: SchemaTree): SchemaTree | undefined {
  const repeated = node.children[0];
  if (node.children.length !== 1 || !repeated || repeated.element.repetition_type !== 'REPEATED')
    return undefined;
  if (repeated.children.length === 0) return repeated;
  return repeated.children.length === 1 ? repeated.children[0] : undefined;
}

const isMap = (e: SchemaElement) =>
  e.converted_type === 'MAP' || e.converted_type === 'MAP_KEY_VALUE' || e.logical_type?.type === 'MAP';

/**
 * The reader of one field. Values are read with MAP and DECIMAL annotations stripped and every field
 * renamed to its position (`f0`, `f1`, ...: parquet-records.ts), so a struct's raw value has positional
 * keys and a map's raw value is `{f0: [{f0: key, f1: value}, ...]}`.
 */
export function fieldReader(node: SchemaTree, insideRepeated = false): FieldReader {
  const e = node.element;
  if (e.repetition_type === 'REPEATED' && !insideRepeated)
    return unsupported('a repeated field outside a LIST or MAP group');
  if (node.children.length === 0) return primitiveReader(e);
  if (e.logical_type?.type === 'VARIANT') return unsupported('Parquet VARIANT is not supported here');
  if (e.converted_type === 'LIST' || e.logical_type?.type === 'LIST') {
    const elementNode = listElement(node);
    if (!elementNode) return unsupported('a LIST layout this reader does not map');
    const element = fieldReader(elementNode, true);
    return {
      type: element.type && arrayOf(element.type),
      problem: element.problem,
      read: (raw) => {
        if (isNull(raw)) return null;
        const out: unknown[] = [];
        for (const item of raw as unknown[]) {
          const cell = element.read(item);
          if (cell instanceof Bad) return cell;
          out.push(cell);
        }
        return out;
      },
      json: (raw) => (isNull(raw) ? 'null' : `[${(raw as unknown[]).map(element.json).join(',')}]`),
    };
  }
  if (isMap(e)) return mapReader(node);
  return structReader(node);
}

function unsupported(problem: string): FieldReader {
  return { type: undefined, problem, read: () => null, json: (raw) => (isNull(raw) ? 'null' : rawJson(raw)) };
}

function mapReader(node: SchemaTree): FieldReader {
  const kv = node.children[0];
  if (node.children.length !== 1 || !kv || kv.children.length !== 2)
    return unsupported('a MAP layout this reader does not map');
  const keyAt = Math.max(
    kv.children.findIndex((c) => c.element.name === 'key'),
    0,
  );
  const valueAt = 1 - keyAt;
  const key = fieldReader(kv.children[keyAt] as SchemaTree, true);
  const value = fieldReader(kv.children[valueAt] as SchemaTree, true);
  const entries = (raw: unknown) => ((raw as Record<string, unknown>).f0 ?? []) as Record<string, unknown>[];
  const type = key.type && value.type && mapOf(key.type, value.type);
  return {
    type,
    problem: key.problem ?? value.problem,
    read: (raw) => {
      if (isNull(raw)) return null;
      const out: { key: unknown; value: unknown }[] = [];
      for (const entry of entries(raw)) {
        const k = key.read(entry[`f${keyAt}`]);
        if (k === null) return new Bad('a map entry with a null key');
        const v = value.read(entry[`f${valueAt}`]);
        if (k instanceof Bad) return k;
        if (v instanceof Bad) return v;
        out.push({ key: k, value: v });
      }
      return out;
    },
    json: (raw) => {
      if (isNull(raw)) return 'null';
      // A JSON object keyed by each key's exact text (JSON of a non-string key, as text).
      const parts = entries(raw).map((entry) => {
        const k = key.json(entry[`f${keyAt}`]);
        return `${k.startsWith('"') ? k : q(k)}:${value.json(entry[`f${valueAt}`])}`;
      });
      return `{${parts.join(',')}}`;
    },
  };
}

function structReader(node: SchemaTree): FieldReader {
  const fields = node.children.map((child, i) => ({
    name: child.element.name,
    key: `f${i}`,
    reader: fieldReader(child),
  }));
  const nested = fields.find((f) => f.reader.type === undefined);
  let type: BronzeType | undefined = nested
    ? undefined
    : structOf(fields.map((f) => ({ name: f.name, type: f.reader.type as BronzeType })));
  const problem = nested
    ? `field '${nested.name}': ${nested.reader.problem}`
    : type && fieldNamesProblem(type);
  if (problem) type = undefined;
  return {
    type,
    problem,
    read: (raw) => {
      if (isNull(raw)) return null;
      const source = raw as Record<string, unknown>;
      const out: Record<string, unknown> = Object.create(null);
      for (const f of fields) {
        const cell = f.reader.read(source[f.key]);
        if (cell instanceof Bad) return cell;
        out[f.name] = cell;
      }
      return out;
    },
    json: (raw) => {
      if (isNull(raw)) return 'null';
      const source = raw as Record<string, unknown>;
      return `{${fields.map((f) => `${q(f.name)}:${f.reader.json(source[f.key])}`).join(',')}}`;
    },
  };
}
