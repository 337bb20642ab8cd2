/**
 * Text from a request or a capture, made safe for a terminal: control
 * characters (escape sequences among them) are shown as escapes, never sent
 * to the terminal as they are.
 */

// C0 controls, DEL and C1 controls; tab stays readable as \t.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** `text` with every control character written as an escape: `\x1b`, `\r`, `\n`, `\t`. */
export function printable(text: string): string {
  return text.replace(CONTROL, (char) => {
    if (char === '\n') return '\\n';
    if (char === '\r') return '\\r';
    if (char === '\t') return '\\t';
    return `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`;
  });
}
