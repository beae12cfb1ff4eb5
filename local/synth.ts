import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { App, DefaultStackSynthesizer } from 'aws-cdk-lib';
import { readContext } from '../infra/context.ts';
import { InletStack } from '../infra/inlet-stack.ts';
import { prune, useBundleCache } from './bundle-cache.ts';
import { cacheDir, projectRoot } from './paths.ts';

export interface CfnTemplate {
  Resources: Record<
    string,
    {
      Type: string;
      Properties?: Record<string, unknown>;
      DependsOn?: string | string[];
      Metadata?: Record<string, unknown>;
    }
  >;
  Outputs?: Record<string, { Value: unknown }>;
  Parameters?: Record<string, unknown>;
  Rules?: Record<string, unknown>;
}

export interface FileAsset {
  /** Directory (or file) the asset was built into. */
  readonly path: string;
  readonly packaging: 'zip' | 'file';
  /** Bucket name with `${AWS::AccountId}` / `${AWS::Region}` placeholders, as the template refers to it. */
  readonly bucketName: string;
  readonly objectKey: string;
}

export interface SynthesizedStack {
  readonly stackName: string;
  /** The cloud assembly in the system temp folder: the caller removes it (removeSynthesized) when done. */
  readonly outdir: string;
  readonly template: CfnTemplate;
  readonly assets: readonly FileAsset[];
}

/**
 * Synthesizes the Inlet stack in-process from cdk.json's context (plus overrides): the one definition both
 * `cdk deploy` and local mode use. No bootstrap-version rule (an emulator has no SSM bootstrap parameter).
 */
export function synthesizeInletStack(
  overrides: Record<string, unknown> = {},
  options: {
    /** CDK's built-in CloudFormation template validation (App `builtinCloudFormationValidation`). @default true */
    validate?: boolean;
    /**
     * Bundle the functions, as `cdk synth` does (local mode runs the bundles; bundles unchanged since an
     * earlier synth are copied from local/bundle-cache.ts's cache). Without it each code asset is the project
     * folder unbundled and the emulator gets an empty zip: enough where no function runs. @default false
     */
    bundle?: boolean;
  } = {},
): SynthesizedStack {
  const cdkJson = JSON.parse(readFileSync(join(projectRoot, 'cdk.json'), 'utf8')) as {
    context: Record<string, unknown>;
  };
  const context: Record<string, unknown> = { ...cdkJson.context, ...overrides };
  if (options.bundle) {
    useBundleCache();
    // As the CDK CLI sets it: each function's resource says where its asset is (`aws:asset:path`).
    context['aws:cdk:enable-asset-metadata'] = true;
  } else {
    context['aws:cdk:bundling-stacks'] = [];
  }
  const outdir = mkdtempSync(join(tmpdir(), 'inlet-cdk-'));
  const app = new App({ context, outdir, builtinCloudFormationValidation: options.validate ?? true });
  const { stackName, props } = readContext((key) => app.node.tryGetContext(key));
  new InletStack(app, stackName, {
    ...props,
    synthesizer: new DefaultStackSynthesizer({ generateBootstrapVersionRule: false }),
  });
  const assembly = app.synth();
  const artifact = assembly.getStackByName(stackName);
  const manifest = JSON.parse(readFileSync(join(outdir, `${stackName}.assets.json`), 'utf8')) as {
    files: Record<
      string,
      {
        source: { path: string; packaging: 'zip' | 'file' };
        destinations: Record<string, { bucketName: string; objectKey: string }>;
      }
    >;
  };
  const assets: FileAsset[] = Object.values(manifest.files).flatMap((file) =>
    Object.values(file.destinations).map((d) => ({
      path: isAbsolute(file.source.path) ? file.source.path : join(outdir, file.source.path),
      packaging: file.source.packaging,
      bucketName: d.bucketName,
      objectKey: d.objectKey,
    })),
  );
  return { stackName, outdir, template: artifact.template as CfnTemplate, assets };
}

export const assetCacheDir = join(cacheDir, 'assets');

/**
 * The bundle of each Node.js function of a bundling synth, found as `sam local` finds it (the resource's
 * `aws:asset:path` metadata), kept in .cache/assets/ under its asset name (`asset.<hash of the bundle>`,
 * so one name is one content) for the processes that run it after the synth is removed.
 * @returns logical id -> the function's code directory
 */
export function keepFunctionCode(stack: SynthesizedStack): Record<string, string> {
  const code: Record<string, string> = {};
  mkdirSync(assetCacheDir, { recursive: true });
  for (const [id, resource] of Object.entries(stack.template.Resources)) {
    const path = resource.Metadata?.['aws:asset:path'];
    const runtime = String(resource.Properties?.Runtime ?? '');
    if (
      resource.Type !== 'AWS::Lambda::Function' ||
      typeof path !== 'string' ||
      !runtime.startsWith('nodejs')
    )
      continue;
    const kept = join(assetCacheDir, path);
    if (!existsSync(kept)) {
      const building = `${kept}.${process.pid}.tmp`;
      cpSync(join(stack.outdir, path), building, { recursive: true });
      try {
        renameSync(building, kept);
      } catch {
        rmSync(building, { recursive: true, force: true });
      }
    }
    code[id] = kept;
  }
  prune(assetCacheDir, 40);
  return code;
}

/** Deletes the synthesized assembly (templates and bundles): nothing of a synth stays in the temp folder. */
export function removeSynthesized(stack: Pick<SynthesizedStack, 'outdir'>): void {
  rmSync(stack.outdir, { recursive: true, force: true });
}
