/** Types of find-python.mjs (plain JavaScript, run by run-tests.mjs before anything is compiled). */
export declare function findPython(): string | undefined;
