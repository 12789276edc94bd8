/**
 * A dataset's optional JSON Schemas for its items' input and expected output (JSON Schema 2020-12, checked with
 * Ajv; docs/EVALUATION.md). A schema comes from a project member, so what could stall the server on a large item is
 * refused: regular expressions (`pattern`, `patternProperties`: a pathological one backtracks for seconds) and
 * `uniqueItems` (quadratic over arrays of objects), as are schemas over 64 KiB and references to other documents.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { ValidationError } from "../../core/errors.js";

export const MAX_SCHEMA_BYTES = 64 * 1024;
export const SCHEMA_PARTS = ["input_schema", "expected_output_schema"] as const;
export type SchemaPart = (typeof SCHEMA_PARTS)[number];

const REFUSED_KEYWORDS = new Set(["pattern", "patternProperties", "uniqueItems", "$dynamicRef", "$recursiveRef"]);
/** Keywords whose value maps names to schemas: its keys are names, not keywords. */
const NAMED_SCHEMAS = new Set(["properties", "$defs", "definitions", "dependentSchemas"]);

const ajv = new Ajv2020({ strict: false, allErrors: false, addUsedSchema: false, validateFormats: false });
const compiled = new Map<string, ValidateFunction>();
const MAX_CACHED = 200;

function refusedKeyword(schema: unknown, named = false): string | undefined {
  if (typeof schema !== "object" || schema === null) return undefined;
  for (const [key, value] of Object.entries(schema)) {
    if (!named && REFUSED_KEYWORDS.has(key)) return key;
    if (!named && key === "$ref" && typeof value === "string" && !value.startsWith("#")) return "$ref to another document";
    const found = refusedKeyword(value, !named && NAMED_SCHEMAS.has(key));
    if (found) return found;
  }
  return undefined;
}

/** The validator of a schema (compiled once per distinct schema); ValidationError naming `field` when it is not one. */
export function validatorOf(schema: unknown, field: string): ValidateFunction {
  const text = JSON.stringify(schema);
  const cached = compiled.get(text);
  if (cached) return cached;
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    throw new ValidationError({ field, message: `${field} must be a JSON Schema object (or null for none)` });
  }
  if (Buffer.byteLength(text) > MAX_SCHEMA_BYTES) throw new ValidationError({ field, message: `${field} may hold at most ${MAX_SCHEMA_BYTES} bytes of JSON` });
  const refused = refusedKeyword(schema);
  if (refused) throw new ValidationError({ field, message: `${field} may not use ${refused} (regular expressions, uniqueItems and other documents are refused)` });
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema);
  } catch (err) {
    throw new ValidationError({ field, message: `${field} is not a valid JSON Schema: ${(err as Error).message.slice(0, 300)}` });
  }
  if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value!);
  compiled.set(text, validate);
  return validate;
}

/** What is wrong with `value` under `schema` (the first error, with its place in the value), or undefined. */
export function schemaProblem(schema: unknown, value: unknown, field: string): string | undefined {
  const validate = validatorOf(schema, field);
  if (validate(value)) return undefined;
  const e = validate.errors?.[0];
  return e ? `${e.instancePath || "the value"} ${e.message ?? "does not match"}` : "does not match the schema";
}

export interface ItemSchemas {
  readonly input_schema: unknown;
  readonly expected_output_schema: unknown;
}

/**
 * Checks items against a dataset's schemas; a ValidationError names the first bad one (`items[3].input`). Expected
 * outputs are checked only when given (null means none).
 */
export function checkItemsAgainst(schemas: ItemSchemas, items: readonly { input: unknown; expected_output: unknown }[], place = (i: number) => `items[${i}]`): void {
  const input = schemas.input_schema ?? null;
  const expected = schemas.expected_output_schema ?? null;
  if (input === null && expected === null) return;
  items.forEach((item, i) => {
    const inputProblem = input !== null ? schemaProblem(input, item.input, "input_schema") : undefined;
    if (inputProblem) throw new ValidationError({ field: `${place(i)}.input`, message: `${place(i)}.input does not match the dataset's input schema: ${inputProblem}` });
    const expectedProblem = expected !== null && item.expected_output !== null ? schemaProblem(expected, item.expected_output, "expected_output_schema") : undefined;
    if (expectedProblem) {
      throw new ValidationError({ field: `${place(i)}.expected_output`, message: `${place(i)}.expected_output does not match the dataset's expected output schema: ${expectedProblem}` });
    }
  });
}
