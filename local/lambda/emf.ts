import type { MemoryMetrics } from '../../shared/kernel/metrics.ts';

interface EmfDirective {
  readonly Metrics?: ReadonlyArray<{ readonly Name?: string; readonly Unit?: string }>;
}

/**
 * A function's metrics as CloudWatch gets them on Lambda: from the Embedded Metric Format lines it writes to
 * its log (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html):
 * a JSON object whose `_aws.CloudWatchMetrics` directives name the members holding values (one number or an
 * array of them). Anything else is a log line, and ignored here.
 */
export function recordEmf(line: string, into: MemoryMetrics): void {
  const start = line.indexOf('{"_aws"');
  if (start < 0) return;
  let document: Record<string, unknown>;
  try {
    document = JSON.parse(line.slice(start)) as Record<string, unknown>;
  } catch {
    return;
  }
  const directives = (document._aws as { CloudWatchMetrics?: EmfDirective[] } | undefined)?.CloudWatchMetrics;
  for (const directive of directives ?? []) {
    for (const { Name, Unit } of directive.Metrics ?? []) {
      if (!Name) continue;
      const values = [document[Name]].flat().filter((v): v is number => typeof v === 'number');
      for (const value of values) {
        if (Unit === 'Milliseconds') into.milliseconds(Name as never, value);
        else into.count(Name as never, value);
      }
    }
  }
}
