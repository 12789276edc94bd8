/**
 * The functions a member's query may call: an allow-list made from the engine's own catalogue (system.functions), by
 * category — arithmetic, comparison, logic, strings, dates, maths, conversion, conditionals, arrays, tuples, maps,
 * JSON, hashes, rounding, aggregates, window functions, … — minus the names that reach outside the query's rows:
 * files and URLs, dictionaries and joinGet, settings, server and host facts, sleeps, models. A function the
 * catalogue puts in no category is not allowed unless named below. Read once per connection and kept.
 * Also read here: the names of the engine's databases, which a query may not name.
 */
import type { ClickHouseSandbox } from "../core/ports/clickhouse.js";

/** system.functions categories (26.x) whose functions only compute on their arguments; aggregates all do. */
const SAFE_CATEGORIES = new Set([
  "Arithmetic", "Arrays", "Bit", "Bitmap", "Comparison", "Conditional", "Dates and Times", "Distance", "Encoding", "Encryption", "Financial",
  "Geo", "Geo Polygon", "Hash", "IP Address", "JSON", "Logical", "Map", "Mathematical", "Null", "NumericIndexedVector", "QBit",
  "Random Number", "Rounding", "String", "String Replacement", "String Search", "String Splitting", "Time Series", "Time Window", "Tuple",
  "Type Conversion", "URL", "UUID",
]);
// Left out by category: Other (but the names below), Dictionary and Embedded Dictionary (they read dictionaries), Introspection,
// Internal, AI (calls to a language model) and Machine Learning (models read from files).

/** Of the category Other, what only computes on its arguments (the rest tell of the server, its settings or files, or wait). */
const SAFE_OTHERS = [
  "bar", "transform", "parseTimeDelta", "formatReadableTimeDelta", "formatReadableDecimalSize", "formatReadableQuantity", "formatReadableSize",
  "parseReadableSize", "parseReadableSizeOrNull", "parseReadableSizeOrZero", "runningDifference", "runningDifferenceStartingWithFirstValue",
  "runningAccumulate", "neighbor", "finalizeAggregation", "initializeAggregation", "toTypeName", "toColumnTypeName", "visibleWidth",
  "defaultValueOfTypeName", "defaultValueOfArgumentType", "countDigits", "isDecimalOverflow", "MACNumToString", "MACStringToNum",
  "MACStringToOUI", "throwIf", "identity", "ignore", "materialize", "isConstant", "minSampleSizeConversion", "minSampleSizeContinuous",
  "variantElement", "variantType", "getSubcolumn", "rowNumberInAllBlocks", "rowNumberInBlock", "blockSize", "blockNumber", "errorCodeToName",
  "getSizeOfEnumType", "flipCoordinates", "colorSRGBToOKLCH", "colorOKLCHToSRGB", "colorSRGBToOKLAB", "colorOKLABToSRGB",
];

/** Never, whatever the catalogue says of them: they read files, URLs, dictionaries, settings or the server, or wait. */
const DENIED = /^(dictGet|dictHas|dictIsIn|joinGet|file|url|s3|hdfs|azure|remote|cluster|input|getSetting|getServerSetting|getMacro|getClient|getOSKernelVersion|getMergeTreeSetting|sleep|hostName|fullHostName|fqdn|version|revision|buildId|uptime|serverUUID|currentDatabase|current_database|currentSchemas|currentUser|currentRoles|currentProfiles|currentQueryID|initialQuery|queryID|session_user|authenticatedUser|shardNum|shardCount|tcpPort|getServerPort|displayName|filesystem|catboost|modelEvaluate|naiveBayes|evalMLMethod|ai[A-Z]|addressTo|demangle|logTrace|hasColumnInTable|hasThreadFuzzer|globalVariable|zookeeper|connection|runningConcurrency|transaction|showCertificate|generateSerialID|region|__)/i;

/** Operators and syntax the parser writes as functions that the catalogue does not list. */
const SYNTAX = ["lambda", "exists", "grouping", "untuple", "_CAST"];

/** Suffixes an aggregate function's name may carry (its combinators): `sumIf`, `uniqExactMerge`, `avgOrNull`, … */
const COMBINATORS = ["If", "Array", "Map", "SimpleState", "State", "MergeState", "Merge", "ForEach", "Distinct", "OrDefault", "OrNull", "Resample", "ArgMin", "ArgMax"];

export interface Catalogue {
  /** Whether a query may call `name`. */
  allows(name: string): boolean;
  /** The engine's databases, lower-cased: a name a query may not use as a qualifier. */
  readonly databases: ReadonlySet<string>;
}

const catalogues = new WeakMap<ClickHouseSandbox, Promise<Catalogue>>();

export function catalogueOf(sandbox: ClickHouseSandbox): Promise<Catalogue> {
  let c = catalogues.get(sandbox);
  if (!c) {
    c = readCatalogue(sandbox);
    catalogues.set(sandbox, c);
    c.catch(() => catalogues.delete(sandbox));
  }
  return c;
}

async function readCatalogue(sandbox: ClickHouseSandbox): Promise<Catalogue> {
  const fns = await sandbox.select("SELECT name, is_aggregate, case_insensitive, alias_to, categories FROM system.functions");
  const dbs = await sandbox.select("SELECT name FROM system.databases");
  const exact = new Set<string>(SYNTAX);
  const folded = new Set<string>();
  const aggregates = new Set<string>();
  const rows = fns.rows as [string, number, number, string, string][];
  const add = (name: string, caseInsensitive: number, aggregate: boolean) => {
    exact.add(name);
    if (Number(caseInsensitive) === 1) folded.add(name.toLowerCase());
    if (aggregate) aggregates.add(name);
  };
  for (const [name, isAggregate, caseInsensitive, aliasTo, category] of rows) {
    const aggregate = Number(isAggregate) === 1;
    if (aliasTo || DENIED.test(name)) continue;
    if (aggregate || SAFE_CATEGORIES.has(category) || SAFE_OTHERS.includes(name)) add(name, caseInsensitive, aggregate);
  }
  // An alias is what it names: DATABASE() is currentDatabase(), dense_rank is denseRank.
  for (const [name, isAggregate, caseInsensitive, aliasTo] of rows) {
    if (aliasTo && !DENIED.test(name) && exact.has(aliasTo)) add(name, caseInsensitive, Number(isAggregate) === 1);
  }
  const databases = new Set<string>(["system", "information_schema", "default", sandbox.database.toLowerCase()]);
  for (const [name] of dbs.rows) databases.add(String(name).toLowerCase());
  const allows = (name: string): boolean => {
    if (DENIED.test(name)) return false;
    if (exact.has(name) || folded.has(name.toLowerCase())) return true;
    // An aggregate with combinators: strip them from the end, then the rest must be an aggregate.
    let base = name;
    for (let strip = true; strip;) {
      strip = false;
      for (const c of COMBINATORS) {
        if (base.length > c.length && base.endsWith(c)) {
          base = base.slice(0, -c.length);
          strip = true;
          if (aggregates.has(base)) return true;
        }
      }
    }
    return false;
  };
  return { allows, databases };
}
