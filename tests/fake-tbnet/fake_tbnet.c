// SPDX-License-Identifier: GPL-2.0-only
/*
 * Test-only stand-in for a Thunderbolt link, for guests without Thunderbolt
 * hardware: a platform driver named "thunderbolt-net" (the name of the real
 * driver, drivers/net/thunderbolt.c, on the thunderbolt bus) binds NUM
 * platform devices and registers an Ethernet netdev "faketb<N>" on each,
 * with the bound device as parent, just as the real driver does from its
 * probe.  Transmitted frames are dropped.  Unloading the module unregisters
 * the netdevs, like a cable pulled.  Never load it on a real system.
 */
#include <linux/etherdevice.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/platform_device.h>

#define FAKE_TBNET_MAX	8

static unsigned int num = 1;
module_param(num, uint, 0444);
MODULE_PARM_DESC(num, "Number of fake Thunderbolt netdevs (1-8, default 1)");

static struct platform_device *fake_pdevs[FAKE_TBNET_MAX];

static netdev_tx_t fake_tbnet_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	ndev->stats.tx_dropped++;
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

static const struct net_device_ops fake_tbnet_ops = {
	.ndo_start_xmit = fake_tbnet_xmit,
	.ndo_set_mac_address = eth_mac_addr,
	.ndo_validate_addr = eth_validate_addr,
};

static int fake_tbnet_probe(struct platform_device *pdev)
{
	struct net_device *ndev;
	int err;

	ndev = alloc_etherdev(0);
	if (!ndev)
		return -ENOMEM;
	SET_NETDEV_DEV(ndev, &pdev->dev);
	strscpy(ndev->name, "faketb%d", sizeof(ndev->name));
	ndev->netdev_ops = &fake_tbnet_ops;
	eth_hw_addr_random(ndev);
	err = register_netdev(ndev);
	if (err) {
		free_netdev(ndev);
		return err;
	}
	platform_set_drvdata(pdev, ndev);
	return 0;
}

static void fake_tbnet_remove(struct platform_device *pdev)
{
	struct net_device *ndev = platform_get_drvdata(pdev);

	unregister_netdev(ndev);
	free_netdev(ndev);
}

static struct platform_driver fake_tbnet_driver = {
	.driver = {
		.name = "thunderbolt-net",
	},
	.probe = fake_tbnet_probe,
#ifdef FAKE_TBNET_VOID_REMOVE
	.remove = fake_tbnet_remove,
#else
	.remove_new = fake_tbnet_remove,	/* the void form on 6.1 */
#endif
};

static void fake_tbnet_unregister_pdevs(void)
{
	int i;

	for (i = FAKE_TBNET_MAX - 1; i >= 0; i--) {
		if (fake_pdevs[i])
			platform_device_unregister(fake_pdevs[i]);
		fake_pdevs[i] = NULL;
	}
}

static int __init fake_tbnet_init(void)
{
	unsigned int i;
	int err;

	if (num < 1 || num > FAKE_TBNET_MAX)
		return -EINVAL;
	err = platform_driver_register(&fake_tbnet_driver);
	if (err)
		return err;
	for (i = 0; i < num; i++) {
		fake_pdevs[i] = platform_device_register_simple("thunderbolt-net",
								i, NULL, 0);
		if (IS_ERR(fake_pdevs[i])) {
			err = PTR_ERR(fake_pdevs[i]);
			fake_pdevs[i] = NULL;
			fake_tbnet_unregister_pdevs();
			platform_driver_unregister(&fake_tbnet_driver);
			return err;
		}
	}
	return 0;
}

static void __exit fake_tbnet_exit(void)
{
	fake_tbnet_unregister_pdevs();
	platform_driver_unregister(&fake_tbnet_driver);
}

module_init(fake_tbnet_init);
module_exit(fake_tbnet_exit);

MODULE_DESCRIPTION("tbrdma test: fake thunderbolt-net netdevs");
MODULE_LICENSE("GPL");
