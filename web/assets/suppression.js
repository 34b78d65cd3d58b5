// Words for findings a rules-file suppression muted (finding.suppressed: null | {reason, until}):
// the page shows them after the others, muted, with a label and their reason in text, so that
// the muting is not told by colour alone. Pure functions.

export function isSuppressed(finding) {
  return Boolean(finding?.suppressed);
}

// "Suppressed until 2026-12-31: capacity request open, INFRA-9"; "" for a finding not suppressed.
export function suppressionText(finding) {
  if (!isSuppressed(finding)) return '';
  const { reason, until } = finding.suppressed;
  return `Suppressed${until ? ` until ${until}` : ''}: ${reason}`;
}

// The findings card's count: "3 findings, largest impact first (1 suppressed, listed last)".
export function findingsCountText(findings) {
  if (!findings.length) return 'no findings';
  const suppressed = findings.filter(isSuppressed).length;
  const base = `${findings.length} finding${findings.length === 1 ? '' : 's'}, largest impact first`;
  return suppressed ? `${base} (${suppressed} suppressed, listed last)` : base;
}
