/**
 * The functions a member's query may call: an allow-list made from the engine's own catalogue (system.functions), by
 * category — arithmetic, comparison, logic, strings, dates, maths, conversion, conditionals, arrays, tuples, maps,
 * JSON, hashes, rounding, aggregates, window functions, … — minus the names that reach outside the query's rows:
 * files and URLs, dictionaries and joinGet, settings, server and host facts, sleeps, models. A function the
 * catalogue puts in no category is not allowed unless named below. Read once per connection and kept.
 * Also read here: the names of the engine's databases, which a query may not name.
 */
import type { ClickHouseSandbox } from "../core/ports/clickhouse.js";

/** system.functions categories whose functions only compute on their arguments. */
const SAFE_CATEGORIES = new Set([
  "Arithmetic", "Array", "Arrays", "Bit", "Bitmap", "Comparison", "Conditional", "Dates and Times", "Distance", "Encoding",
  "Financial", "Geo", "Hash", "IP Address", "JSON", "Logical", "Map", "Mathematical", "Null", "Nullable", "Rounding",
  "String", "String Replacement", "String Search", "String Splitting", "Time Series", "Time Window", "Tuple",
  "Type Conversion", "Conversion", "ULID", "URL", "UUID", "Aggregate", "Window", "Splitting", "Search", "Replacement",
  "Encryption", "NLP", "Embedded Dictionary", "Other",
]);

/** Never, whatever their category: they read files, URLs, dictionaries, settings or the server, or wait. */
const DENIED = /^(dictGet|dictHas|dictIsIn|joinGet|file|url|s3|hdfs|azure|remote|cluster|input|getSetting|getServerSetting|getMacro|getClientHTTPHeader|getOSKernelVersion|getMergeTreeSetting|getSizeOfEnumType$|sleep|throwIf$|hostName|hostname|fqdn|FQDN|version|revision|buildId|uptime|serverUUID|serverTimezone|timezoneOf$|currentDatabase|currentSchemas|currentUser|currentRoles|currentProfiles|enabledRoles|defaultRoles|enabledProfiles|defaultProfiles|currentQueryID|initialQueryID|queryID|initialQueryStartTime|shardNum|shardCount|tcpPort|displayName|filesystem|catboost|modelEvaluate|naiveBayes|evalMLMethod|stochastic|addressTo|demangle|trap|logTrace|hasColumnInTable|hasThreadFuzzer|globalVariable|zookeeper|getSubcolumn$|identity$|ignore$|connectionId|connection_id|isDecimalOverflow$|runningConcurrency|blockSerializedSize|byteSize$|countMatches$|getTypeSerializationStreams|dumpColumnStructure|materialize$|transactionID|transactionLatestSnapshot|transactionOldestSnapshot|partitionId|partitionID|__)/i;

/** Operators and syntax the parser writes as functions, which the catalogue may list in no category. */
const SYNTAX = [
  "and", "or", "not", "xor", "equals", "notEquals", "less", "greater", "lessOrEquals", "greaterOrEquals", "plus", "minus", "multiply", "divide",
  "modulo", "negate", "intDiv", "in", "notIn", "globalIn", "globalNotIn", "nullIn", "notNullIn", "globalNullIn", "globalNotNullIn", "like", "notLike",
  "ilike", "notILike", "match", "tuple", "array", "arrayElement", "tupleElement", "lambda", "isNull", "isNotNull", "if", "multiIf", "CAST", "_CAST",
  "exists", "concat", "coalesce", "map", "grouping", "isNotDistinctFrom", "toTypeName", "assumeNotNull", "toNullable", "ifNull", "nullIf",
];

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
  for (const [name, isAggregate, caseInsensitive, , categories] of fns.rows as [string, number, number, string, string | string[]][]) {
    if (DENIED.test(name)) continue;
    const cats = (Array.isArray(categories) ? categories : String(categories ?? "").split(",")).map((c) => c.trim()).filter(Boolean);
    const aggregate = Number(isAggregate) === 1;
    if (!aggregate && !cats.some((cat) => SAFE_CATEGORIES.has(cat))) continue;
    exact.add(name);
    if (Number(caseInsensitive) === 1) folded.add(name.toLowerCase());
    if (aggregate) aggregates.add(name);
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
