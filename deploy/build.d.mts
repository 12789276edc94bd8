/** Types of build.mjs (plain JavaScript, so deploy/bin/runwatch.mjs can run it before anything is compiled). */
export declare const DIST: string;
export declare function build(): Promise<void>;
export declare function ensureBuilt(): Promise<void>;
/** The build dist points at now, recorded as used by this process; import from it to stay on it. */
export declare function useBuild(): Promise<string>;
