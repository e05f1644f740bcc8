import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('provisioning', '0004_batched_git_writes'),
        ('tenants', '0017_request_waits_out_outages'),
    ]

    operations = [
        migrations.CreateModel(
            name='ClusterWatch',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('holder', models.CharField(blank=True, max_length=255)),
                ('lease_expires_at', models.DateTimeField(blank=True, null=True)),
                ('heartbeat_at', models.DateTimeField(blank=True, null=True)),
                ('events', models.BigIntegerField(default=0)),
                ('relists', models.BigIntegerField(default=0)),
                ('restarts', models.BigIntegerField(default=0)),
                ('lag_seconds', models.FloatField(default=0.0)),
                ('cluster', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='watch', to='tenants.cluster')),
            ],
        ),
    ]
