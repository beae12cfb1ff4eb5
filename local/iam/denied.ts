/**
 * AccessDenied as each service answers it, so the SDK raises the same error it would on AWS: S3's XML 403
 * (no body on HEAD), DynamoDB's and EventBridge's JSON AccessDeniedException (400), SQS's `AccessDenied`
 * (403; in the JSON protocol with `x-amzn-query-error` naming the query-protocol code, as SQS sends it).
 * Message text as IAM writes it: "User: <session> is not authorized to perform: <action> on resource:
 * <arn> because no identity-based policy allows the <action> action"
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/troubleshoot_access-denied.html).
 */
export interface DeniedResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

export function deniedMessage(
  principal: string,
  action: string,
  resource: string,
  explicit: boolean,
): string {
  const why = explicit
    ? 'with an explicit deny in a resource-based policy'
    : `because no identity-based policy allows the ${action} action`;
  return `User: ${principal} is not authorized to perform: ${action} on resource: ${resource} ${why}`;
}

const xmlEscape = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function accessDenied(
  service: string,
  request: { readonly method: string; readonly json: boolean },
  message: string,
  requestId: string,
): DeniedResponse {
  if (service === 's3')
    return {
      status: 403,
      headers: { 'content-type': 'application/xml', 'x-amz-request-id': requestId },
      body:
        request.method === 'HEAD'
          ? ''
          : `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>${xmlEscape(message)}</Message><RequestId>${requestId}</RequestId><HostId>inlet-iam-check</HostId></Error>`,
    };
  if (service === 'sqs') {
    if (request.json)
      return {
        status: 403,
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'x-amzn-requestid': requestId,
          'x-amzn-query-error': 'AccessDenied;Sender',
        },
        body: JSON.stringify({ __type: 'com.amazon.coral.service#AccessDeniedException', message }),
      };
    return {
      status: 403,
      headers: { 'content-type': 'text/xml', 'x-amzn-requestid': requestId },
      body: `<?xml version="1.0"?><ErrorResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/"><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>${xmlEscape(message)}</Message><Detail/></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
    };
  }
  return {
    status: 400,
    headers: {
      'content-type': service === 'dynamodb' ? 'application/x-amz-json-1.0' : 'application/x-amz-json-1.1',
      'x-amzn-requestid': requestId,
      'x-amzn-errortype': 'AccessDeniedException',
    },
    body: JSON.stringify(
      service === 'dynamodb'
        ? { __type: 'com.amazon.coral.service#AccessDeniedException', Message: message }
        : { __type: 'AccessDeniedException', message },
    ),
  };
}
