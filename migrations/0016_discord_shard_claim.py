from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('hermes', '0015_rate_budget')]

    initial = False

    operations = [
        ops.CreateModel(
            name='DiscordReplica',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('owner', fields.CharField(unique=True, max_length=64)),
                ('expires_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'discord_replica', 'app': 'hermes', 'pk_attr': 'id', 'table_description': 'A replica with the Discord adapter up, until when: how many share the gateway shards.'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='DiscordShardClaim',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('shard_id', fields.IntField(unique=True)),
                ('shard_count', fields.IntField()),
                ('owner', fields.CharField(max_length=64)),
                ('expires_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'discord_shard_claim', 'app': 'hermes', 'pk_attr': 'id', 'table_description': 'Which replica connects a Discord gateway shard, until when. An expired claim is up for grabs.'},
            bases=['Model'],
        ),
    ]
