/**
 * The languages the detector can name. `id` is the VS Code language id (what editors and the dashboard use);
 * `model` is the label of the guesslang model shipped in @vscode/vscode-languagedetection.
 */
export interface LanguageInfo {
  readonly id: string;
  readonly name: string;
  readonly model?: string;
  /** Other names a caller may pass as `language` (file extensions, common spellings). */
  readonly aliases?: readonly string[];
}

export const LANGUAGES: readonly LanguageInfo[] = [
  { id: "asm", name: "Assembly", model: "asm", aliases: ["assembly", "s", "nasm"] },
  { id: "bat", name: "Batch", model: "bat", aliases: ["batch", "cmd"] },
  { id: "c", name: "C", model: "c", aliases: ["h"] },
  { id: "clojure", name: "Clojure", model: "clj", aliases: ["clj"] },
  { id: "cmake", name: "CMake", model: "cmake" },
  { id: "cobol", name: "COBOL", model: "cbl", aliases: ["cbl"] },
  { id: "coffeescript", name: "CoffeeScript", model: "coffee", aliases: ["coffee"] },
  { id: "cpp", name: "C++", model: "cpp", aliases: ["c++", "cc", "cxx", "hpp"] },
  { id: "csharp", name: "C#", model: "cs", aliases: ["c#", "cs"] },
  { id: "css", name: "CSS", model: "css" },
  { id: "csv", name: "CSV", model: "csv" },
  { id: "dart", name: "Dart", model: "dart" },
  { id: "dm", name: "DM", model: "dm" },
  { id: "dockerfile", name: "Dockerfile", model: "dockerfile", aliases: ["docker"] },
  { id: "elixir", name: "Elixir", model: "ex", aliases: ["ex", "exs"] },
  { id: "erlang", name: "Erlang", model: "erl", aliases: ["erl"] },
  { id: "fortran", name: "Fortran", model: "f90", aliases: ["f90"] },
  { id: "go", name: "Go", model: "go", aliases: ["golang"] },
  { id: "groovy", name: "Groovy", model: "groovy" },
  { id: "haskell", name: "Haskell", model: "hs", aliases: ["hs"] },
  { id: "html", name: "HTML", model: "html", aliases: ["htm"] },
  { id: "ini", name: "INI", model: "ini" },
  { id: "java", name: "Java", model: "java" },
  { id: "javascript", name: "JavaScript", model: "js", aliases: ["js", "jsx", "mjs", "cjs", "node"] },
  { id: "json", name: "JSON", model: "json" },
  { id: "julia", name: "Julia", model: "jl", aliases: ["jl"] },
  { id: "kotlin", name: "Kotlin", model: "kt", aliases: ["kt", "kts"] },
  { id: "latex", name: "LaTeX", model: "tex", aliases: ["tex"] },
  { id: "lisp", name: "Lisp", model: "lisp" },
  { id: "lua", name: "Lua", model: "lua" },
  { id: "makefile", name: "Makefile", model: "makefile", aliases: ["make"] },
  { id: "markdown", name: "Markdown", model: "md", aliases: ["md"] },
  { id: "matlab", name: "MATLAB", model: "matlab" },
  { id: "objective-c", name: "Objective-C", model: "mm", aliases: ["objc", "mm", "m"] },
  { id: "ocaml", name: "OCaml", model: "ml", aliases: ["ml"] },
  { id: "pascal", name: "Pascal", model: "pas", aliases: ["pas", "delphi"] },
  { id: "perl", name: "Perl", model: "pm", aliases: ["pl", "pm"] },
  { id: "php", name: "PHP", model: "php" },
  { id: "powershell", name: "PowerShell", model: "ps1", aliases: ["ps1"] },
  { id: "prolog", name: "Prolog", model: "prolog" },
  { id: "python", name: "Python", model: "py", aliases: ["py", "python3"] },
  { id: "r", name: "R", model: "r" },
  { id: "ruby", name: "Ruby", model: "rb", aliases: ["rb"] },
  { id: "rust", name: "Rust", model: "rs", aliases: ["rs"] },
  { id: "scala", name: "Scala", model: "scala" },
  { id: "shellscript", name: "Shell", model: "sh", aliases: ["sh", "bash", "shell", "zsh"] },
  { id: "sql", name: "SQL", model: "sql", aliases: ["postgres", "mysql", "plpgsql"] },
  { id: "swift", name: "Swift", model: "swift" },
  { id: "toml", name: "TOML", model: "toml" },
  { id: "typescript", name: "TypeScript", model: "ts", aliases: ["ts", "tsx"] },
  { id: "verilog", name: "Verilog", model: "v", aliases: ["v"] },
  { id: "vb", name: "Visual Basic", model: "vba", aliases: ["vba", "vbnet"] },
  { id: "xml", name: "XML", model: "xml" },
  { id: "yaml", name: "YAML", model: "yaml", aliases: ["yml"] },
  { id: "plaintext", name: "Plain text", aliases: ["text", "txt", "plain"] },
];

const byModelLabel = new Map(LANGUAGES.filter((l) => l.model).map((l) => [l.model!, l]));
const byName = new Map<string, LanguageInfo>();
for (const l of LANGUAGES) {
  for (const n of [l.id, l.name, ...(l.aliases ?? [])]) byName.set(n.toLowerCase(), l);
}

/** The language for a guesslang model label ("py" → python). */
export const fromModelLabel = (label: string): LanguageInfo | undefined => byModelLabel.get(label);

/** The language a caller named, by id, display name or alias, case-insensitively ("C#", "py", "bash"). */
export const findLanguage = (name: string): LanguageInfo | undefined => byName.get(name.trim().toLowerCase());

export const languageName = (id: string): string => findLanguage(id)?.name ?? id;
