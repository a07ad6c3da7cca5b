/**
 * Findings of the document detector and how they add up to one score.
 *
 * Each finding type is one independent line of evidence. Repeats of a type (fifty invisible
 * text runs) count once at their most severe, and the types combine by noisy-OR: a single
 * strong finding is enough to call a document manipulated, several weak ones add up.
 */

export type Severity = 'info' | 'low' | 'medium' | 'high';

/** A rectangle on a page, origin top-left; points for PDF pages, pixels for images. */
export interface FindingBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Finding {
  type: string;
  severity: Severity;
  /** 1-based page number, or null for the document as a whole. */
  page: number | null;
  box?: FindingBox;
  /** 1-based revision (incremental update) the finding belongs to, where it applies. */
  revision?: number;
  evidence: string;
}

/** Probability that a document with this finding alone is manipulated. */
export const SEVERITY_PROBABILITY: Record<Severity, number> = { info: 0, low: 0.2, medium: 0.55, high: 0.85 };

/** Base rate when nothing was found: absence of evidence is not proof of authenticity. */
export const BASELINE_SCORE = 0.05;

export function fuseFindings(findings: readonly Finding[]): { score: number; byType: Map<string, { severity: Severity; count: number }> } {
  const byType = new Map<string, { severity: Severity; count: number }>();
  for (const finding of findings) {
    const current = byType.get(finding.type);
    if (!current) byType.set(finding.type, { severity: finding.severity, count: 1 });
    else {
      current.count++;
      if (SEVERITY_PROBABILITY[finding.severity] > SEVERITY_PROBABILITY[current.severity]) current.severity = finding.severity;
    }
  }
  let clean = 1 - BASELINE_SCORE;
  for (const { severity } of byType.values()) clean *= 1 - SEVERITY_PROBABILITY[severity];
  return { score: 1 - clean, byType };
}

export const SEVERITY_ORDER: Record<Severity, number> = { high: 0, medium: 1, low: 2, info: 3 };

export function sortFindings(findings: Finding[]): Finding[] {
  return findings.sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || (a.page ?? 0) - (b.page ?? 0));
}
