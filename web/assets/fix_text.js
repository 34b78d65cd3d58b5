// Splits a finding's fix or evidence line into plain text and configuration tokens, so that keys
// and values ("spark.dynamicAllocation.minExecutors=2", "fs.s3a.committer.name") show as code.
// Pure; the DOM side sets each part as text.

const CONFIG_TOKEN = new RegExp(
  '`([^`]+)`' +                                                              // `anything quoted`
  '|\\b((?:spark|fs|hadoop|yarn|parquet|mapreduce)\\.[A-Za-z0-9_.\\-]*[A-Za-z0-9_]' +  // a key
  '(?:=(?:<[^<>]*>|[^\\s,;()]*[^\\s,;().]))?)',                              // =value or =<placeholder>
  'g');

// "set spark.x=1 (now 0)" -> [{code:false,text:'set '},{code:true,text:'spark.x=1'},{code:false,...}]
export function splitConfigTokens(text) {
  const parts = [];
  let last = 0;
  for (const match of String(text).matchAll(CONFIG_TOKEN)) {
    if (match.index > last) parts.push({ code: false, text: text.slice(last, match.index) });
    parts.push({ code: true, text: match[1] ?? match[2] });
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push({ code: false, text: text.slice(last) });
  return parts;
}
