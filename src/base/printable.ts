/**
 * Text from outside (a receiver's answer, a request, a capture, what a log
 * line quotes) made safe to print as part of one line: control characters (escape sequences, CR and LF
 * among them) and the characters that end or reorder a line are shown as
 * escapes, never sent to the terminal as they are, and the text is cut short,
 * so that what a receiver or a sender wrote can neither forge a line of ours
 * nor flood the screen.
 */

// C0 controls, DEL and C1 controls; the line and paragraph separators; the bidirectional marks, embeddings, overrides and isolates.
const UNPRINTABLE = /[\p{Cc}\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/** The most characters `printable` keeps by default: far more than any error code, event id or type. */
export const MAX_PRINTABLE_CHARS = 200;

/**
 * `text` with every unprintable character written as an escape (`\x1b`, `\r`,
 * `\n`, `\t`, `\u202e`), cut to `maxChars` characters of the escaped text,
 * a `…` marking the cut.
 */
export function printable(text: string, maxChars = MAX_PRINTABLE_CHARS): string {
  let shown = '';
  // By code point, so that a cut splits neither an escape nor a surrogate pair; a long text costs no more than the bound.
  for (const char of text) {
    const piece = UNPRINTABLE.test(char) ? escaped(char) : char;
    if (shown.length + piece.length > maxChars) return `${shown}…`;
    shown += piece;
  }
  return shown;
}

/** One unprintable character as its escape. */
function escaped(char: string): string {
  if (char === '\n') return '\\n';
  if (char === '\r') return '\\r';
  if (char === '\t') return '\\t';
  // Every unprintable character past U+00FF is in U+2000–U+206F: four hex digits.
  const hex = char.codePointAt(0)!.toString(16);
  return hex.length <= 2 ? `\\x${hex.padStart(2, '0')}` : `\\u${hex}`;
}
