/**
 * The one CSV parser (RFC 4180, https://www.rfc-editor.org/rfc/rfc4180): rows of fields from text fed in
 * pieces of any size, so a landing file streams through it chunk by chunk and an S3 Inventory line goes
 * through it whole. A field in double quotes may hold commas, line breaks and `""` (one quote); a line ends
 * at LF or CRLF outside quotes. Lenient where the RFC is silent, as spreadsheets write CSV: a quote inside an
 * unquoted field is kept as a character, and so is text after a closing quote. A byte order mark is the
 * decoder's to drop (`TextDecoder` does).
 */

export interface CsvRow {
  /** The fields; once the row ran past `maxRowChars`, only those begun before it, cut. */
  readonly fields: readonly string[];
  /** The row as written (quotes as they are), without its line ending, at most `rawKeep` characters. */
  readonly raw: string;
  /** The row ran past `maxRowChars`: its fields stopped growing there (the caller rescues it). */
  readonly tooLong: boolean;
}

export interface CsvOptions {
  /** Characters of one row (line breaks in quotes included) past which it is `tooLong`. @default Infinity */
  readonly maxRowChars?: number;
  /** Characters of a row kept in `raw`. @default Infinity */
  readonly rawKeep?: number;
}

/** How the input ended, after its last complete row: a last row without a line ending, or inside quotes. */
export type CsvEnd =
  | { readonly kind: 'done'; readonly row?: CsvRow }
  /** The input ended inside a quoted field: `raw` is what that row had. */
  | { readonly kind: 'unterminated'; readonly raw: string };

/** What ends a run of characters in an unquoted field. */
const UNQUOTED_SPECIAL = /[,\r\n]/g;

export class CsvParser {
  private readonly maxRowChars: number;
  private readonly rawKeep: number;
  private fields: string[] = [];
  private field = '';
  private raw = '';
  private rowChars = 0;
  private tooLong = false;
  private quoted = false;
  /** In quotes, a `"` was the last character: a second one is a quote, anything else closes the field. */
  private quoteSeen = false;
  /** Outside quotes, a CR was the last character: an LF after it ends the row, anything else keeps it. */
  private crSeen = false;
  /** The current field has begun (a character, or an opening quote): a quote now is just a character. */
  private fieldStarted = false;

  constructor(options: CsvOptions = {}) {
    this.maxRowChars = options.maxRowChars ?? Number.POSITIVE_INFINITY;
    this.rawKeep = options.rawKeep ?? Number.POSITIVE_INFINITY;
  }

  /** The rows completed by `text` (each ended by a line break in it). */
  *write(text: string): Generator<CsvRow> {
    for (let i = 0; i < text.length; ) {
      // Runs of ordinary characters are taken whole: inside quotes up to the next quote, in a field that
      // has begun up to the next comma or line break (a quote there is a character).
      if (this.quoted && !this.quoteSeen) {
        const end = text.indexOf('"', i);
        i = this.run(text, i, end < 0 ? text.length : end);
        if (i === text.length) break;
      } else if (!this.quoted && !this.crSeen && this.fieldStarted) {
        UNQUOTED_SPECIAL.lastIndex = i;
        const end = UNQUOTED_SPECIAL.exec(text)?.index ?? text.length;
        i = this.run(text, i, end);
        if (i === text.length) break;
      }
      const c = text[i] as string;
      i += 1;
      if (this.count(c)) yield this.endRow();
    }
  }

  /** Ends the input: the last row if it had no line ending, or that it ended inside quotes. */
  end(): CsvEnd {
    if (this.quoted && !this.quoteSeen) return { kind: 'unterminated', raw: this.raw };
    if (this.crSeen) this.raw = this.raw.slice(0, -1);
    const pending = this.rowChars > 0;
    const row = pending ? this.endRow() : undefined;
    return row ? { kind: 'done', row } : { kind: 'done' };
  }

  /** Takes one character; true when it ended the row. */
  private count(c: string): boolean {
    this.rowChars += 1;
    if (this.rowChars > this.maxRowChars) this.tooLong = true;
    else if (this.raw.length < this.rawKeep) this.raw += c;
    return this.take(c);
  }

  /** Takes `text[from, to)`, characters with no meaning here, into the field; returns `to`. */
  private run(text: string, from: number, to: number): number {
    if (to === from) return to;
    this.rowChars += to - from;
    if (this.raw.length < this.rawKeep)
      this.raw += text.slice(from, Math.min(to, from + this.rawKeep - this.raw.length));
    if (this.rowChars > this.maxRowChars) this.tooLong = true;
    if (!this.tooLong) this.field += text.slice(from, to);
    this.fieldStarted = true;
    return to;
  }

  private take(c: string): boolean {
    if (this.quoted) {
      if (this.quoteSeen) {
        this.quoteSeen = false;
        if (c === '"') {
          this.append('"');
          return false;
        }
        // The quote before was the closing one: `c` is outside the quotes.
        this.quoted = false;
        return this.unquoted(c);
      }
      if (c === '"') this.quoteSeen = true;
      else this.append(c);
      return false;
    }
    return this.unquoted(c);
  }

  private unquoted(c: string): boolean {
    if (this.crSeen) {
      this.crSeen = false;
      if (c === '\n') {
        // CRLF: neither is in the row's text.
        this.raw = this.raw.replace(/\r\n$/, '');
        return true;
      }
      this.append('\r');
    }
    if (c === '"' && !this.fieldStarted) {
      this.quoted = true;
      this.fieldStarted = true;
    } else if (c === ',') {
      this.fields.push(this.field);
      this.field = '';
      this.fieldStarted = false;
    } else if (c === '\r') this.crSeen = true;
    else if (c === '\n') {
      this.raw = this.raw.replace(/\n$/, '');
      return true;
    } else this.append(c);
    return false;
  }

  private append(c: string): void {
    this.fieldStarted = true;
    if (!this.tooLong) this.field += c;
  }

  private endRow(): CsvRow {
    this.fields.push(this.field);
    const row = { fields: this.fields, raw: this.raw, tooLong: this.tooLong };
    this.fields = [];
    this.field = '';
    this.raw = '';
    this.rowChars = 0;
    this.tooLong = false;
    this.quoted = false;
    this.quoteSeen = false;
    this.crSeen = false;
    this.fieldStarted = false;
    return row;
  }
}
