/**
 * Text a person types that is shown back on pages and stored in Postgres as `text`: names of users, projects and
 * agents, e-mail addresses. Postgres refuses NUL in text (a 500 were it not checked first), and control characters
 * or a lone surrogate in a name only ever come from a forged request.
 */
const CONTROL_CHARACTERS = /[\u0000-\u001f]/;

/** What is wrong with `text` as a name, phrased to follow the field's name ("must not …"); undefined when nothing is. */
export function displayTextProblem(text: string): string | undefined {
  if (CONTROL_CHARACTERS.test(text)) return "must not contain control characters";
  if (!text.isWellFormed()) return "must not contain a lone UTF-16 surrogate";
  return undefined;
}
