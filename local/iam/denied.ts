/**
 * The proxy's own answers as each service's protocol shapes an error, so the SDK raises the error it would
 * on AWS. AccessDenied: S3's XML 403 (no body on HEAD), DynamoDB's and EventBridge's JSON
 * AccessDeniedException (400), SQS's `AccessDenied` (403; in the JSON protocol with `x-amzn-query-error`
 * naming the query-protocol code, as SQS sends it). Message text as IAM writes it: "User: <session> is not
 * authorized to perform: <action> on resource: <arn> because no identity-based policy allows the <action>
 * action" (https://docs.aws.amazon.com/IAM/latest/UserGuide/troubleshoot_access-denied.html).
 * ServiceUnavailable (503), when the emulator behind the proxy does not answer: AWS's common error for "a
 * temporary failure of the server", which the SDK retries like any 5xx and Inlet counts as an outcome it
 * cannot know (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/CommonErrors.html).
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

/** How a request spoke to its service: what the error answering it must be written in. */
export interface WireRequest {
  readonly method: string;
  /** `x-amz-target` was set: the JSON protocols (DynamoDB, EventBridge, Step Functions, SQS's JSON). */
  readonly json: boolean;
  readonly contentType?: string;
}

/**
 * `ServiceUnavailable`, 503, in the request's protocol: rest-xml (S3), JSON 1.0/1.1 (with SQS's
 * `x-amzn-query-error`, which the SDK names the error after), query (an XML `ErrorResponse`, for a form-encoded
 * request), rest-json (Lambda: the type in `x-amzn-errortype`).
 */
export function serviceUnavailable(
  service: string,
  request: WireRequest,
  message: string,
  requestId: string,
): DeniedResponse {
  const code = 'ServiceUnavailable';
  const status = 503;
  if (service === 's3')
    return {
      status,
      headers: { 'content-type': 'application/xml', 'x-amz-request-id': requestId },
      body:
        request.method === 'HEAD'
          ? ''
          : `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${xmlEscape(message)}</Message><RequestId>${requestId}</RequestId><HostId>inlet-iam-check</HostId></Error>`,
    };
  if (request.json)
    return {
      status,
      headers: {
        'content-type': request.contentType ?? 'application/x-amz-json-1.0',
        'x-amzn-requestid': requestId,
        'x-amzn-errortype': code,
        ...(service === 'sqs' ? { 'x-amzn-query-error': `${code};Receiver` } : {}),
      },
      body: JSON.stringify({ __type: code, message }),
    };
  if (request.contentType?.startsWith('application/x-www-form-urlencoded'))
    return {
      status,
      headers: { 'content-type': 'text/xml', 'x-amzn-requestid': requestId },
      body: `<?xml version="1.0"?><ErrorResponse><Error><Type>Receiver</Type><Code>${code}</Code><Message>${xmlEscape(message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
    };
  return {
    status,
    headers: { 'content-type': 'application/json', 'x-amzn-requestid': requestId, 'x-amzn-errortype': code },
    body: JSON.stringify({ message }),
  };
}
