/**
 * What a parsed JSON value takes printed again, counted before it is printed:
 * indentation grows with the depth of each line, so a small body nested deep
 * prints to many times its size, and JSON.stringify recurses once a level.
 */
import { Buffer } from 'node:buffer';

/** How deep a JSON value may nest to be printed again: deeper, printing it may exhaust the stack. */
export const MAX_JSON_DEPTH = 64;

/** What the printed size of a value depends on: its compact bytes, and the lines and levels indentation adds. */
export interface JsonShape {
  /** The bytes of `JSON.stringify(value)`. */
  readonly compactBytes: number;
  /** The line breaks an indented print adds: one before each element or member, one before each non-empty container's end. */
  readonly lines: number;
  /** The indentation steps those lines start with, together. */
  readonly levels: number;
  /** The members of objects: each gains a space after its colon. */
  readonly members: number;
}

/** The shape of a value `JSON.parse` gave, walked without recursion; undefined when it nests past `MAX_JSON_DEPTH`. */
export function jsonShape(value: unknown): JsonShape | undefined {
  let compactBytes = 0;
  let lines = 0;
  let levels = 0;
  let members = 0;
  const pending: Array<{ readonly node: unknown; readonly level: number }> = [{ node: value, level: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { node, level } = next;
    if (node === null || typeof node !== 'object') {
      compactBytes += Buffer.byteLength(JSON.stringify(node));
      continue;
    }
    // A container at `level` is `level + 1` deep.
    if (level >= MAX_JSON_DEPTH) return undefined;
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
    if (!Array.isArray(node)) {
      for (const key of Object.keys(node)) compactBytes += Buffer.byteLength(JSON.stringify(key)) + 1;
      members += children.length;
    }
    // The brackets, and a comma between children.
    compactBytes += 2 + Math.max(children.length - 1, 0);
    if (children.length === 0) continue;
    lines += children.length + 1;
    levels += children.length * (level + 1) + level;
    for (const child of children) pending.push({ node: child, level: level + 1 });
  }
  return { compactBytes, lines, levels, members };
}

/** The bytes of `JSON.stringify(value, null, indent)` for a value of `shape`. */
export function printedBytes(shape: JsonShape, indent: number): number {
  return indent === 0 ? shape.compactBytes : shape.compactBytes + shape.lines + indent * shape.levels + shape.members;
}
