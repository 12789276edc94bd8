/**
 * A dataset's optional JSON Schemas for its items' input and expected output (docs/EVALUATION.md), checked by
 * core/json-schema.ts (which refuses what could stall the server on a large item).
 */
import { ValidationError } from "../../core/errors.js";
import { validatorOf, validatorProblem } from "../../core/json-schema.js";

export { validatorOf };
export const SCHEMA_PARTS = ["input_schema", "expected_output_schema"] as const;
export type SchemaPart = (typeof SCHEMA_PARTS)[number];

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
  if ((input === null && expected === null) || items.length === 0) return;
  // Looked up once, not per item: finding a validator walks and serializes its schema.
  const inputValidator = input !== null ? validatorOf(input, "input_schema") : undefined;
  const expectedValidator = expected !== null ? validatorOf(expected, "expected_output_schema") : undefined;
  items.forEach((item, i) => {
    const inputProblem = inputValidator ? validatorProblem(inputValidator, item.input) : undefined;
    if (inputProblem) throw new ValidationError({ field: `${place(i)}.input`, message: `${place(i)}.input does not match the dataset's input schema: ${inputProblem}` });
    const expectedProblem = expectedValidator && item.expected_output !== null ? validatorProblem(expectedValidator, item.expected_output) : undefined;
    if (expectedProblem) {
      throw new ValidationError({ field: `${place(i)}.expected_output`, message: `${place(i)}.expected_output does not match the dataset's expected output schema: ${expectedProblem}` });
    }
  });
}
