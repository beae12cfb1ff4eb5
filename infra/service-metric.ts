import { Duration } from 'aws-cdk-lib';
import { Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { METRICS_NAMESPACE, type MetricName } from '../shared/kernel/names.ts';

/**
 * One of Inlet's EMF metrics (Powertools Metrics: namespace `Inlet`, dimension `service`), as every dashboard
 * row and alarm reads it: the pipeline's functions, the bronze sink and its maintenance.
 */
export function serviceMetric(
  service: string,
  name: MetricName,
  statistic = 'Sum',
  period: Duration = Duration.minutes(1),
): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: { service },
    statistic,
    period,
  });
}
