/**
 * Syntax markers that are (nearly) unique to one language, in the spirit of GitHub Linguist's heuristics.
 * The guesslang model is good at families ("C-like", "JS-like") but often mixes close relatives
 * (JavaScript/TypeScript, C/C++/Rust); a few unambiguous markers settle those cases and cover snippets
 * too short for the model (it needs ≥ 20 characters).
 *
 * Each marker adds `weight` to its language's score; a language's total is capped at MAX_SCORE.
 */
export interface Marker {
  readonly language: string;
  readonly pattern: RegExp;
  readonly weight: number;
}

const m = (language: string, weight: number, ...patterns: RegExp[]): Marker[] =>
  patterns.map((pattern) => ({ language, pattern, weight }));

export const MARKERS: readonly Marker[] = [
  // Shebangs and file-type declarations are as strong as evidence gets.
  ...m("python", 1, /^#!.*\bpython[\d.]*\b/),
  ...m("shellscript", 1, /^#!.*\b(ba|z|k|da)?sh\b/),
  ...m("javascript", 1, /^#!.*\bnode\b/),
  ...m("ruby", 1, /^#!.*\bruby\b/),
  ...m("perl", 1, /^#!.*\bperl\b/),
  ...m("php", 1, /<\?php\b/),

  ...m("python", 0.25, /^\s*def \w+\(.*\)\s*(->\s*[\w\[\], .]+)?:\s*$/m, /^\s*from [\w.]+ import [\w*]/m,
    /^\s*(el)?if .+:\s*$/m, /\bself\.\w+/, /^if __name__ == ["']__main__["']:/m, /^\s*@\w+(\.\w+)*(\(.*\))?\s*\n\s*(async )?def /m,
    /\b(print|len|range)\(.*\)(?!\s*[{;])\s*$/m, /^\s*(try|except(\s+\w+.*)?|finally|else):\s*$/m),
  ...m("ruby", 0.25, /^\s*def \w+[?!]?(\(.*\))?\s*$/m, /^\s*end\s*$/m, /\bdo \|[\w, ]+\|/, /\{ *\|[\w, ]+\| /,
    /^\s*(require|require_relative) ['"]/m, /\battr_(reader|accessor|writer)\b/, /#\{[^}]*\}/, /^\s*puts /m, /:\w+ => /),
  ...m("javascript", 0.15, /\brequire\(['"][\w@/.:-]+['"]\)/, /\bmodule\.exports\b/, /\bdocument\.\w+/, /\bwindow\.\w+/),
  // Shared with TypeScript (a superset): weak on their own; TypeScript's own markers outweigh them.
  ...m("javascript", 0.1, /\bconsole\.(log|error|warn|info)\(/, /^\s*(const|let) \w+ = /m, /\) => [{\w(]/, /\bfunction\*? ?\w*\([\w, ]*\) \{/),
  ...m("typescript", 0.35, /^\s*(export )?(interface|type) \w+(<[^>]*>)? *(=|\{|extends)/m,
    /\b(private|public|protected|readonly) \w+(\??:|\()/, /\)\s*:\s*(Promise<|void\b|string\b|number\b|boolean\b|[A-Z]\w*(<|\[|\s*\{))/,
    /\b(const|let|var) \w+\s*:\s*[\w<>\[\]|, ]+\s*=/, /\bimport type\b/, /\bas (const|unknown|any|string|number|[A-Z]\w*)\b/,
    /\b\w+\??: (string|number|boolean|unknown|any)\b/, /^\s*(export )?enum \w+ \{/m, /@(Injectable|Component|NgModule)\(/),
  ...m("go", 0.35, /^package \w+\s*$/m, /\bfunc (\(\w+ \*?\w+\) )?\w+\(/, /\w+ := /, /\bfmt\.\w+\(/, /^import \($/m,
    /\bchan\b|<-\s*\w+|\bgo \w+\(/, /\berr != nil\b/),
  ...m("rust", 0.35, /\bfn \w+(<[^>]*>)?\(/, /\blet mut\b/, /^\s*impl(<[^>]*>)? [\w:<>]+( for [\w:<>]+)? \{/m, /\b\w+!\(/,
    /&(mut )?self\b/, /^\s*use (std|crate|super)::/m, /^\s*#\[(derive|cfg|test|tokio)/m, /\bpub (fn|struct|enum|mod)\b/, /\bOption<|\bResult<|\bVec</),
  ...m("java", 0.3, /\bpublic (static )?(final )?(class|interface|enum) \w+/, /\bSystem\.(out|err)\.print/, /^import java(x)?\./m,
    /^\s*@(Override|Test|Entity|Autowired|GetMapping|PostMapping|RestController|RequestMapping)\b/m, /\bString\[\] args\b/, /\bnew \w+<>\(/, /^package [\w.]+;$/m),
  ...m("csharp", 0.35, /^using System(\.[\w.]+)?;$/m, /\{ *get; *(private |init; *)?(set; *)?\}/, /\bConsole\.(Write|WriteLine|ReadLine)\(/,
    /\basync Task(<[^>]+>)?\b/, /^\s*namespace [\w.]+\s*(\{|;)?\s*$/m, /\bstring\[\] args\b/, /^\s*\[(ApiController|HttpGet|HttpPost|Route|Test|Fact)\b/m,
    /\bpublic (sealed |static |abstract )?(class|record|interface) \w+/, /\b(IEnumerable|IList|Dictionary|List)<\w+/, /\bMonoBehaviour\b/),
  ...m("c", 0.3, /^#include <(stdio|stdlib|string|stdint|unistd|pthread|sys\/\w+)\.h>/m, /\b(malloc|calloc|free|printf|fprintf|memcpy|strlen)\(/,
    /\bstruct \w+ \*\w+/, /\w->\w/, /^typedef struct\b/m, /\bNULL\b/),
  ...m("cpp", 0.4, /\bstd::\w+/, /^#include <(iostream|vector|string|map|memory|algorithm|thread|mutex|fstream|array)>/m, /\btemplate\s*</,
    /^\s*(public|private|protected):\s*$/m, /^\s*namespace \w+ \{/m, /\b(nullptr|constexpr|noexcept)\b/, /\bvirtual\b/, /\boverride\b\s*\{/, /\bclass \w+ : public \w+/),
  ...m("php", 0.4, /\$\w+\s*=/, /\$this->/, /\bfunction \w+\(.*\$\w+/, /\becho\b.*;/, /\barray_\w+\(/),
  ...m("shellscript", 0.3, /^\s*(fi|done|esac)\s*$/m, /^\s*(if|while|until) \[\[? /m, /\$\(\w+/, /"\$\{?\w+\}?"/, /^\s*echo /m,
    /^\s*export [A-Za-z_]\w*=/m, /^\s*(local|declare)( -[a-zA-Z]+)? \w+/m, /\|\s*(grep|xargs|sort|awk|sed|tail|head|wc)\b/, /^\s*set -[euxo]+/m, /^\s*\w+\(\) \{/m),
  ...m("sql", 0.4, /\bSELECT\b[\s\S]+?\bFROM\b/i, /\b(CREATE|ALTER|DROP) (TABLE|VIEW|INDEX|FUNCTION|TRIGGER)\b/i, /\bINSERT INTO\b/i,
    /\bUPDATE \w+ SET\b/i, /\bDELETE FROM\b/i, /\b(GROUP|ORDER) BY\b/i, /\b(LEFT|INNER|RIGHT|OUTER) JOIN\b/i, /^\s*(BEGIN|COMMIT|ROLLBACK);/im),
];

const MAX_SCORE = 1;

/** Evidence per language id, 0..1, from the markers found in the code. */
export function markerScores(code: string): Map<string, number> {
  const scores = new Map<string, number>();
  for (const { language, pattern, weight } of MARKERS) {
    if (pattern.test(code)) scores.set(language, Math.min(MAX_SCORE, (scores.get(language) ?? 0) + weight));
  }
  return scores;
}
