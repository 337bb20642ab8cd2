/**
 * The part of Standard Schema v1 (standardschema.dev) this package uses,
 * declared here rather than imported: the shape is the interface's contract,
 * so zod 4, valibot 1, arktype 2 and any other implementation match it
 * structurally, and the published types need no dependency. Types only.
 */

/** A schema of any library that implements Standard Schema v1. */
export interface StandardSchema<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaProps<Input, Output>;
}

export interface StandardSchemaProps<Input = unknown, Output = Input> {
  /** The version of the standard; only 1 exists. */
  readonly version: 1;
  /** The library's name. */
  readonly vendor: string;
  /** Checks a value; may answer synchronously or not. */
  readonly validate: (value: unknown) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
  /** Present in the types only, to carry the input and output types. */
  readonly types?: { readonly input: Input; readonly output: Output } | undefined;
}

/** Success when `issues` is absent; a failure whenever it is present. */
export type StandardSchemaResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: readonly StandardSchemaIssue[] };

export interface StandardSchemaIssue {
  /** The library's message: may quote the value, so it is never sent on. */
  readonly message: string;
  /** Where the value failed, from the root; absent for the root. */
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** The type a schema's successful validation returns. */
export type StandardSchemaOutput<S extends StandardSchema> = NonNullable<S['~standard']['types']>['output'];
