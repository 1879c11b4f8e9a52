import torch.nn as nn

DEFAULT_ACT = nn.ReLU


def conv_bn(cin, cout, k=3, stride=1, act=DEFAULT_ACT):
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, k // 2, bias=False), nn.BatchNorm2d(cout), act(inplace=True))
