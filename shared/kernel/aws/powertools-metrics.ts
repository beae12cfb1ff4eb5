import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MetricName, MetricsSink } from '../metrics.ts';

/** MetricsSink over Powertools Metrics (CloudWatch EMF, no API calls). */
export class PowertoolsMetrics implements MetricsSink {
  constructor(private readonly metrics: Metrics) {}
  count(name: MetricName, value: number): void {
    this.metrics.addMetric(name, MetricUnit.Count, value);
  }
  milliseconds(name: MetricName, value: number): void {
    this.metrics.addMetric(name, MetricUnit.Milliseconds, value);
  }
  flush(): void {
    this.metrics.publishStoredMetrics();
  }
}
