/**
 * Decodes an object key from an S3 event notification (SQS, SNS, Lambda shapes). AWS form-URL-encodes it:
 * "red flower.jpg" arrives as "red+flower.jpg", a literal "+" as "%2B" (AmazonS3 user guide,
 * notification-content-structure; aws/aws-sdk-js#837). '+' must become a space *before* percent-decoding,
 * or a literal plus (%2B -> '+') would turn into a space too.
 * @example decodeNotificationKey('a+b%2Bc%25.json') === 'a b+c%.json'
 */
export function decodeNotificationKey(encoded: string): string {
  return decodeURIComponent(encoded.replace(/\+/g, ' '));
}
