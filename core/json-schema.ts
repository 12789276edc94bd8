/**
 * JSON Schemas that project members write (a dataset's item schemas, an evaluator's json_schema check): JSON Schema
 * 2020-12, checked with Ajv. A schema comes from a project member, so what could stall the server on a large value is
 * refused: regular expressions (`pattern`, `patternProperties`: a pathological one backtracks for seconds) and
 * `uniqueItems` (quadratic over arrays of objects), as are schemas over 64 KiB and references to other documents.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { ValidationError } from "./errors.js";
import { refuseUnstorableSetting } from "./storable-setting.js";

export const MAX_SCHEMA_BYTES = 64 * 1024;

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
  refuseUnstorableSetting(schema, field); // first: JSON.stringify would overflow the stack on a deep schema
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
export const schemaProblem = (schema: unknown, value: unknown, field: string): string | undefined => validatorProblem(validatorOf(schema, field), value);

/** What is wrong with `value` under a compiled schema: for many values, look the validator up once (validatorOf). */
export function validatorProblem(validate: ValidateFunction, value: unknown): string | undefined {
  if (validate(value)) return undefined;
  const e = validate.errors?.[0];
  return e ? `${e.instancePath || "the value"} ${e.message ?? "does not match"}` : "does not match the schema";
}

