from django.db import models


class Invoice(models.Model):
    paid = models.BooleanField(default=False)
    charges = models.IntegerField(default=0)  # how many times the card was charged
