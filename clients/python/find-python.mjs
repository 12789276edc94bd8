// The interpreter a new venv is made with: RUNWATCH_PYTHON, else the first python3 on the PATH that is 3.10 or
// later. Used by the Python client's suite (run-tests.mjs) and the framework tests (test/frameworks/workspace.ts).
import { spawnSync } from "node:child_process";

/** The first candidate that runs and is Python >= 3.10; undefined when none is. */
export function findPython() {
  const candidates = [process.env.RUNWATCH_PYTHON, "python3", "python3.12", "python3.11", "python3.10"].filter(Boolean);
  return candidates.find((p) => spawnSync(p, ["-c", "import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)"]).status === 0);
}
