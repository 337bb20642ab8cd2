/**
 * The part of node:sqlite (Node 22.5 and later) the docs' snippets use, for
 * `npm run check:docs`: the project's @types/node is Node 20's, which has no
 * node:sqlite. Drop it once @types/node is 22 or later.
 */
declare module 'node:sqlite' {
  interface StatementSync {
    run(...params: Array<string | number | bigint | null>): { changes: number | bigint; lastInsertRowid: number | bigint };
    get(...params: Array<string | number | bigint | null>): Record<string, unknown> | undefined;
  }
  class DatabaseSync {
    constructor(path: string, options?: { timeout?: number });
    readonly isTransaction: boolean;
    exec(sql: string): void;
    prepare(sql: string): StatementSync;
    close(): void;
  }
}
