/** Types of build.mjs (plain JavaScript, so deploy/bin/runwatch.mjs can run it before anything is compiled). */
export declare const DIST: string;
export declare function build(): Promise<void>;
export declare function ensureBuilt(): Promise<void>;
