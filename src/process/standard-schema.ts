/**
 * The part of Standard Schema v1 (standardschema.dev) this package uses,
 * declared here rather than imported: the shape is the interface's contract,
 * so zod 4, valibot 1, arktype 2 and any other implementation match it
 * structurally, and the published types need no dependency. Types only.
 */

/** A schema of any library that implements Standard Schema v1. */
export interface StandardSchema<Input = unknown, Output = Input> {
  /** The standard's properties, under a key no library uses for anything else. */
  readonly '~standard': StandardSchemaProps<Input, Output>;
}

/** What a Standard Schema carries under `~standard`. */
export interface StandardSchemaProps<Input = unknown, Output = Input> {
  /** The version of the standard; only 1 exists. */
  readonly version: 1;
  /** The library's name. */
  readonly vendor: string;
  /** Checks a value; may answer synchronously or not. */
  readonly validate: (value: unknown) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
  /** Present in the types only, to carry the input and output types. */
  readonly types?:
    | {
        /** The type the schema takes. */
        readonly input: Input;
        /** The type a successful validation gives. */
        readonly output: Output;
      }
    | undefined;
}

/** Success when `issues` is absent; a failure whenever it is present. */
export type StandardSchemaResult<Output> =
  | {
      /** The validated value, the schema's output. */
      readonly value: Output;
      /** Absent on success. */
      readonly issues?: undefined;
    }
  | {
      /** Why the value failed: never empty where the library follows the standard; an empty list still fails. */
      readonly issues: readonly StandardSchemaIssue[];
    };

/** One reason a value failed a schema. */
export interface StandardSchemaIssue {
  /** The library's message: may quote the value, so it is never sent on. */
  readonly message: string;
  /** Where the value failed, from the root; absent for the root. */
  readonly path?:
    | ReadonlyArray<
        | PropertyKey
        | {
            /** The key of this segment of the path. */
            readonly key: PropertyKey;
          }
      >
    | undefined;
}

/** The type a schema's successful validation returns. */
export type StandardSchemaOutput<S extends StandardSchema> = NonNullable<S['~standard']['types']>['output'];
