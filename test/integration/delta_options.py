"""delta-rs storage options for the emulator (moto speaks plain HTTP, with moto's fixed credentials)."""


def emulator_options(endpoint, region, **extra):
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_REGION": region,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_ALLOW_HTTP": "true",
        **extra,
    }
